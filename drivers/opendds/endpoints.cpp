// Writers and readers: QoS, writing, taking, waiting, the listener.
#include "endpoints.h"

#include <dds/DCPS/LocalObject.h>
#include <dds/DCPS/Marked_Default_Qos.h>

#include <cstdio>
#include <thread>

#include "psbench/sdk_dds.hpp"
#include "psbench/sdk_dds_status.hpp"

namespace psbodds {

using OpenDDS::DCPS::DEFAULT_STATUS_MASK;

namespace {

constexpr DDS::Duration_t kMaxBlockingTime = {1, 0};  // a reliable write's wait for room
constexpr DDS::Duration_t kAckWaitOnDestroy = {5, 0};

DDS::Duration_t duration(int64_t ns) {
  if (ns < 0) return {DDS::DURATION_INFINITE_SEC, DDS::DURATION_INFINITE_NSEC};
  return {CORBA::Long(ns / 1'000'000'000), CORBA::ULong(ns % 1'000'000'000)};
}

// psbench's QoS onto an endpoint's: reliability, durability and history; history not
// given (0) keeps OpenDDS's default, keep_last 1.
template <class Qos>
void apply_qos(const psb_qos &q, Qos &qos) {
  qos.reliability.kind = q.reliability == PSB_RELIABLE ? DDS::RELIABLE_RELIABILITY_QOS
                                                       : DDS::BEST_EFFORT_RELIABILITY_QOS;
  qos.reliability.max_blocking_time = kMaxBlockingTime;
  qos.durability.kind = q.durability == PSB_TRANSIENT_LOCAL ? DDS::TRANSIENT_LOCAL_DURABILITY_QOS
                                                            : DDS::VOLATILE_DURABILITY_QOS;
  if (q.history == PSB_KEEP_ALL) {
    qos.history.kind = DDS::KEEP_ALL_HISTORY_QOS;
  } else if (q.history == PSB_KEEP_LAST) {
    qos.history.kind = DDS::KEEP_LAST_HISTORY_QOS;
    qos.history.depth = CORBA::Long(q.history_depth);
  }
}

// Listener mode: on_data_available hands the reader's samples to the node.
class DataListener : public OpenDDS::DCPS::LocalObject<DDS::DataReaderListener> {
 public:
  explicit DataListener(Reader *r) : reader_(r) {}
  void on_data_available(DDS::DataReader_ptr) override { reader_->on_data_available(); }
  void on_requested_deadline_missed(DDS::DataReader_ptr,
                                    const DDS::RequestedDeadlineMissedStatus &) override {}
  void on_requested_incompatible_qos(DDS::DataReader_ptr,
                                     const DDS::RequestedIncompatibleQosStatus &) override {}
  void on_sample_rejected(DDS::DataReader_ptr, const DDS::SampleRejectedStatus &) override {}
  void on_liveliness_changed(DDS::DataReader_ptr, const DDS::LivelinessChangedStatus &) override {}
  void on_subscription_matched(DDS::DataReader_ptr,
                               const DDS::SubscriptionMatchedStatus &) override {}
  void on_sample_lost(DDS::DataReader_ptr, const DDS::SampleLostStatus &) override {}

 private:
  Reader *reader_;
};

void build_complex(psbench::Complex &s, uint32_t elements) {
  s.outers.length(elements);
  int32_t element = 0;
  for (uint32_t i = 0; i < elements; ++i) {
    psbench::Outer &outer = s.outers[i];
    outer.length = kInnersPerOuter;
    outer.inners.length(kInnersPerOuter);
    for (uint32_t j = 0; j < kInnersPerOuter; ++j, ++element) {
      char info[17];
      std::snprintf(info, sizeof info, "psbench/%08x", unsigned(element));
      outer.inners[j].info = CORBA::string_dup(info);  // a char * would be adopted
      outer.inners[j].index = element;
    }
  }
}

}  // namespace

// ---- Writer ------------------------------------------------------------------------------

Writer::Writer(Context &ctx, const char *topic) : ctx_(ctx), complex_(ctx.settings.complex) {
  try {
    if (complex_) build_complex(complex_sample_, ctx.settings.elements);
    topic_ = ctx.acquire_topic(topic);
    DDS::DataWriterQos qos;
    ctx.publisher->get_default_datawriter_qos(qos);
    apply_qos(ctx.settings.qos, qos);
    writer_ = ctx.publisher->create_datawriter(topic_, qos, nullptr, DEFAULT_STATUS_MASK);
    if (CORBA::is_nil(writer_.in()))
      fail("cannot create a DataWriter on '%s' (OpenDDS's message is above)", topic);
    if (complex_)
      complex_writer_ = psbench::ComplexDataWriter::_narrow(writer_.in());
    else
      bytes_writer_ = psbench::BytesDataWriter::_narrow(writer_.in());
  } catch (...) {
    tear_down();
    throw;
  }
}

Writer::~Writer() { tear_down(); }

void Writer::tear_down() noexcept {
  try {
    if (!CORBA::is_nil(writer_.in())) {
      // A reliable writer deleted with samples in flight loses them (the end marker
      // too): give matched readers time to acknowledge, as a DDS application should.
      writer_->wait_for_acknowledgments(kAckWaitOnDestroy);
      bytes_writer_ = psbench::BytesDataWriter::_nil();
      complex_writer_ = psbench::ComplexDataWriter::_nil();
      ctx_.publisher->delete_datawriter(writer_.in());
      writer_ = DDS::DataWriter::_nil();
    }
    if (topic_ != nullptr) ctx_.release_topic(topic_);
  } catch (...) {
  }
  topic_ = nullptr;
  bytes_.payload.replace(0, 0, nullptr, false);  // the node's buffer is not ours
}

void Writer::failed(DDS::ReturnCode_t rc, size_t len) const {
  if (rc == DDS::RETCODE_TIMEOUT)
    fail(
        "a reliable write of %zu bytes found no room in the writer's history within %d s "
        "(the reader is not keeping up)",
        len, int(kMaxBlockingTime.sec));
  fail("DataWriter::write of %zu bytes failed: %s", len, psb::sdk::dds::return_code_name(rc));
}

bool Writer::drain(int64_t timeout_ns) {
  const DDS::ReturnCode_t rc = writer_->wait_for_acknowledgments(duration(timeout_ns));
  if (rc == DDS::RETCODE_OK) return true;
  if (rc == DDS::RETCODE_TIMEOUT) return false;
  fail("wait_for_acknowledgments failed: %s", psb::sdk::dds::return_code_name(rc));
}

int Writer::matched() const {
  DDS::PublicationMatchedStatus st;
  return writer_->get_publication_matched_status(st) == DDS::RETCODE_OK ? int(st.current_count)
                                                                        : -1;
}

// ---- Reader ------------------------------------------------------------------------------

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
    : ctx_(ctx),
      complex_(ctx.settings.complex),
      elements_(ctx.settings.elements),
      capacity_(ctx.settings.max_payload),
      buffer_(ctx.settings.max_payload),
      on_data_(on_data) {
  try {
    topic_ = ctx.acquire_topic(topic);
    DDS::DataReaderQos qos;
    ctx.subscriber->get_default_datareader_qos(qos);
    apply_qos(ctx.settings.qos, qos);
    if (on_data) listener_ = new DataListener(this);
    reader_ = ctx.subscriber->create_datareader(topic_, qos, listener_.in(),
                                                on_data ? DDS::DATA_AVAILABLE_STATUS : 0);
    if (CORBA::is_nil(reader_.in()))
      fail("cannot create a DataReader on '%s' (OpenDDS's message is above)", topic);
    if (complex_)
      complex_reader_ = psbench::ComplexDataReader::_narrow(reader_.in());
    else
      bytes_reader_ = psbench::BytesDataReader::_narrow(reader_.in());
    if (ctx.settings.notify == PSB_NOTIFY_WAIT) {
      condition_ = reader_->create_readcondition(DDS::ANY_SAMPLE_STATE, DDS::ANY_VIEW_STATE,
                                                 DDS::ANY_INSTANCE_STATE);
      waitset_ = new DDS::WaitSet;
      if (CORBA::is_nil(condition_.in()) ||
          waitset_->attach_condition(condition_.in()) != DDS::RETCODE_OK)
        fail("cannot set up the reader's wait set");
    }
  } catch (...) {
    tear_down();
    throw;
  }
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() noexcept {
  try {
    if (!CORBA::is_nil(reader_.in())) {
      // No callback after this returns: later ones return at once, one in progress ends.
      stopping_.store(true);
      reader_->set_listener(nullptr, 0);
      while (in_callback_.load() != 0) std::this_thread::yield();
      if (!CORBA::is_nil(waitset_.in())) waitset_->detach_condition(condition_.in());
      if (!CORBA::is_nil(condition_.in())) reader_->delete_readcondition(condition_.in());
      condition_ = DDS::ReadCondition::_nil();
      bytes_reader_ = psbench::BytesDataReader::_nil();
      complex_reader_ = psbench::ComplexDataReader::_nil();
      ctx_.subscriber->delete_datareader(reader_.in());
      reader_ = DDS::DataReader::_nil();
    }
    if (topic_ != nullptr) ctx_.release_topic(topic_);
  } catch (...) {
  }
  topic_ = nullptr;
}

bool Reader::try_take(const void *&data, size_t &len) {
  return complex_ ? take_complex(data, len) : take_bytes(data, len);
}

bool Reader::take_bytes(const void *&data, size_t &len) {
  for (;;) {  // skipping what carries no data (e.g. "no writers left" on the instance)
    const DDS::ReturnCode_t rc = bytes_reader_->take(bytes_, infos_, 1, DDS::ANY_SAMPLE_STATE,
                                                     DDS::ANY_VIEW_STATE, DDS::ANY_INSTANCE_STATE);
    if (rc == DDS::RETCODE_NO_DATA) return false;
    if (rc != DDS::RETCODE_OK)
      fail("DataReader::take failed: %s", psb::sdk::dds::return_code_name(rc));
    const bool valid = infos_[0].valid_data;
    size_t n = 0;
    if (valid) {
      const psbench::Bytes &s = bytes_[0];
      n = kHeaderSize + s.payload.length();
      if (n <= capacity_) {
        std::memcpy(buffer_.data(), &s.header, kHeaderSize);
        if (s.payload.length() != 0)
          std::memcpy(buffer_.data() + kHeaderSize, s.payload.get_buffer(), s.payload.length());
      }
    }
    bytes_reader_->return_loan(bytes_, infos_);
    if (!valid) continue;
    if (n > capacity_)
      psb::sdk::bad_sample(
          "received a message of %zu bytes, larger than this run's %zu; do "
          "both sides use the same --size?",
          n, capacity_);
    data = buffer_.data();
    len = n;
    return true;
  }
}

bool Reader::take_complex(const void *&data, size_t &len) {
  for (;;) {
    const DDS::ReturnCode_t rc =
        complex_reader_->take(complex_samples_, infos_, 1, DDS::ANY_SAMPLE_STATE,
                              DDS::ANY_VIEW_STATE, DDS::ANY_INSTANCE_STATE);
    if (rc == DDS::RETCODE_NO_DATA) return false;
    if (rc != DDS::RETCODE_OK)
      fail("DataReader::take failed: %s", psb::sdk::dds::return_code_name(rc));
    const bool valid = infos_[0].valid_data;
    char problem[160] = "";
    if (valid) {
      const psbench::Complex &s = complex_samples_[0];
      if (s.outers.length() != elements_)
        std::snprintf(problem, sizeof problem,
                      "complex sample has %u outer elements, expected %u (do both sides use "
                      "the same elements=N?)",
                      unsigned(s.outers.length()), elements_);
      for (CORBA::ULong i = 0; problem[0] == '\0' && i < s.outers.length(); ++i)
        if (s.outers[i].inners.length() != kInnersPerOuter)
          std::snprintf(problem, sizeof problem,
                        "complex sample: outer element %u has %u inner elements, expected %u",
                        unsigned(i), unsigned(s.outers[i].inners.length()), kInnersPerOuter);
      std::memcpy(buffer_.data(), &s.header, kHeaderSize);
    }
    complex_reader_->return_loan(complex_samples_, infos_);
    if (!valid) continue;
    if (problem[0] != '\0') psb::sdk::bad_sample("%s", problem);
    data = buffer_.data();
    len = kHeaderSize;
    return true;
  }
}

bool Reader::wait(int64_t timeout_ns) {
  if (CORBA::is_nil(waitset_.in())) return true;  // poll: the node never waits
  const DDS::ReturnCode_t rc = waitset_->wait(active_, duration(timeout_ns));
  if (rc == DDS::RETCODE_TIMEOUT) return false;
  if (rc != DDS::RETCODE_OK) fail("WaitSet::wait failed: %s", psb::sdk::dds::return_code_name(rc));
  return true;
}

void Reader::on_data_available() {
  in_callback_.fetch_add(1);
  if (!stopping_.load())  // the SDK hands over all there is, counting errors
    on_data_.drain([this](const void *&data, size_t &len) { return try_take(data, len); });
  in_callback_.fetch_sub(1);
}

int Reader::matched() const {
  DDS::SubscriptionMatchedStatus st;
  return reader_->get_subscription_matched_status(st) == DDS::RETCODE_OK ? int(st.current_count)
                                                                         : -1;
}

void Reader::counters(psb::sdk::CounterSink put) const {
  psb::sdk::dds::put_sample_statuses<DDS::SampleLostStatus, DDS::SampleRejectedStatus>(put,
                                                                                       *reader_);
}

}  // namespace psbodds
