// Taking: DataReader::take_next_sample into the endpoint's own sample, then one copy
// into the contiguous message the node reads. Wait mode blocks in
// DataReader::wait_for_unread_message; listener mode uses on_data_available.
#include "reader.h"

#include <chrono>
#include <cstdio>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <thread>

#include "endpoint_qos.h"

namespace psbfastdds {

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::Duration_t;
using psb::sdk::fail;

class Reader::Listener final : public DataReaderListener {
 public:
  explicit Listener(Reader *r) : reader_(r) {}
  void on_data_available(DataReader *) override { reader_->on_data_available(); }

 private:
  Reader *reader_;
};

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
    : ctx_(ctx), on_data_(on_data) {
  const Settings &s = ctx.settings();
  if (bool(on_data) != (s.notify == PSB_NOTIFY_LISTENER))
    fail("a listener callback is given exactly with notify listener");
  try {
    sample_ = make_sample(s);
    capacity_ = s.max_payload;
    buffer_.reset(new uint8_t[capacity_]);
    topic_ = ctx.acquire_topic(topic);
    const DataReaderQos base = s.transport == Transport::config
                                   ? ctx.subscriber()->get_default_datareader_qos()
                                   : DataReaderQos();
    if (on_data) listener_ = std::make_unique<Listener>(this);
    reader_ = ctx.subscriber()->create_datareader(
        topic_, reader_qos(s, base), listener_.get(),
        on_data ? StatusMask::data_available() : StatusMask::none());
    if (reader_ == nullptr)
      fail("cannot create a DataReader on '%s' (Fast DDS's message is above)", topic);
  } catch (const psb::sdk::Error &) {
    tear_down();
    throw;
  } catch (const std::exception &e) {
    tear_down();
    fail("create_reader failed: %s", e.what());  // as before the SDK
  }
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() noexcept {
  if (reader_ != nullptr) {
    // Stop callbacks before the reader and the node's callback target go away.
    stopping_.store(true);
    reader_->set_listener(nullptr, StatusMask::none());
    while (in_callback_.load() != 0) std::this_thread::yield();
    ctx_.subscriber()->delete_datareader(reader_);
    reader_ = nullptr;
  }
  if (topic_ != nullptr) ctx_.release_topic(topic_);
  topic_ = nullptr;
}

bool Reader::try_take(const void *&data, size_t &len) {
  for (;;) {
    const ReturnCode_t rc = reader_->take_next_sample(sample_->data(), &info_);
    if (rc == ReturnCode_t::RETCODE_NO_DATA) return false;
    if (rc != ReturnCode_t::RETCODE_OK)
      fail("DataReader::take_next_sample failed with return code %d", static_cast<int>(rc()));
    if (!info_.valid_data) continue;  // an instance state change, no data
    data = buffer_.get();
    len = sample_->store(buffer_.get(), capacity_);  // BadSample: not one of this run's
    return true;
  }
}

bool Reader::wait(int64_t timeout_ns) {
  const int64_t ns = timeout_ns < 0 ? 1'000'000'000 : timeout_ns;  // no limit: 1 s steps
  return reader_->wait_for_unread_message(Duration_t(static_cast<int32_t>(ns / 1'000'000'000),
                                                     static_cast<uint32_t>(ns % 1'000'000'000)));
}

void Reader::on_data_available() {
  in_callback_.fetch_add(1);
  if (!stopping_.load())  // the SDK hands over all there is, counting errors
    on_data_.drain([this](const void *&data, size_t &len) { return try_take(data, len); });
  in_callback_.fetch_sub(1);
}

void Reader::counters(psb::sdk::CounterSink put) const {
  eprosima::fastdds::dds::SampleLostStatus lost;
  if (reader_->get_sample_lost_status(lost) == ReturnCode_t::RETCODE_OK)
    put("sample_lost", uint64_t(lost.total_count));
  eprosima::fastdds::dds::SampleRejectedStatus rejected;
  if (reader_->get_sample_rejected_status(rejected) == ReturnCode_t::RETCODE_OK)
    put("sample_rejected", uint64_t(rejected.total_count));
}

int Reader::matched() const {
  SubscriptionMatchedStatus status;
  if (reader_->get_subscription_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
  return status.current_count;
}

}  // namespace psbfastdds
