// A reader of the run's type in one of the node's notify modes (README, "Notify modes").
// take copies straight into memory of the reader's (no loan): the sample sequence's one
// element is the reader's own sample, and a bytes sample's payload sequence points into
// one contiguous buffer (samples::ReceiveBuffer), so OpenSplice's copy-out writes the
// payload where the node reads it. complex: the sample is kept across takes (OpenSplice
// reuses its sequences and strings) and only the header goes into the buffer.
#pragma once

#include "context.h"
#include "psbench/sdk.hpp"
#include "psbench/sdk_dds_status.hpp"
#include "samples.h"

namespace psbospl {

class Reader {
 public:
  // Throws psb::sdk::Error if the reader cannot be made.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
      : ctx_(ctx),
        local_(topic),
        buffer_(ctx.settings.complex, ctx.settings.elements, ctx.settings.max_payload),
        listener_(listener) {
    auto q = allocated(DDS_DataReaderQos__alloc());
    check_rc(DDS_Subscriber_get_default_datareader_qos(ctx.subscriber, q.get()), "reader QoS");
    apply_qos(*q, ctx.settings);
    dds_listener_.listener_data = this;
    dds_listener_.on_data_available = &Reader::on_data_available;
    reader_ =
        checked(DDS_Subscriber_create_datareader(
                    ctx.subscriber, ctx.topic(topic), q.get(), listener_ ? &dds_listener_ : nullptr,
                    listener_ ? DDS_DATA_AVAILABLE_STATUS : DDS_STATUS_MASK_NONE),
                "cannot create a reader");
    if (ctx.settings.notify == PSB_NOTIFY_WAIT) {
      try {
        condition_ =
            checked(DDS_DataReader_create_readcondition(reader_, DDS_ANY_SAMPLE_STATE,
                                                        DDS_ANY_VIEW_STATE, DDS_ANY_INSTANCE_STATE),
                    "cannot create a read condition");
        waitset_ = checked(DDS_WaitSet__alloc(), "cannot create a waitset");
        triggered_ = checked(DDS_ConditionSeq__alloc(), "out of memory");
        check_rc(DDS_WaitSet_attach_condition(waitset_, condition_),
                 "cannot attach to the waitset");
      } catch (...) {
        destroy();
        throw;
      }
    }
  }
  ~Reader() { destroy(); }
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  // The SDK's take() tries, then waits (psb::sdk::take_waiting).
  bool try_take(const void *&data, size_t &len) { return take_now(data, len); }
  // Wait mode: the read condition triggers while a sample is waiting. Poll mode (the node
  // never waits then): tried again at once.
  bool wait(int64_t timeout_ns) {
    if (waitset_ == nullptr) return true;
    if (timeout_ns < 0) timeout_ns = int64_t{DDS_DURATION_INFINITE_SEC} * 1000000000;
    const DDS_Duration_t t = {DDS_long(timeout_ns / 1000000000),
                              DDS_unsigned_long(timeout_ns % 1000000000)};
    const DDS_ReturnCode_t rc = DDS_WaitSet_wait(waitset_, triggered_, &t);
    if (rc == DDS_RETCODE_TIMEOUT) return false;
    if (rc != DDS_RETCODE_OK) fail_rc("waiting for data", rc);
    return true;
  }

  int matched() const {  // matched writers
    return psb::sdk::dds::matched(reader_, &DDS_DataReader_get_subscription_matched_status);
  }

  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb::sdk::CounterSink put) const {
    psb::sdk::dds::put_sample_statuses(put, reader_, &DDS_DataReader_get_sample_lost_status,
                                       &DDS_DataReader_get_sample_rejected_status);
  }

 private:
  // true = a sample is in buffer_ (data, length in len), false = none now; throws on an
  // error (psb::sdk::BadSample for a sample not of this run).
  bool take_now(const void *&data, size_t &len) {
    DDS_ReturnCode_t rc;
    do {  // skipping what carries no data (e.g. "no writers left" on the instance)
      DDS_SampleInfoSeq infos = {1, 0, &info_, true};  // the reader's own: never freed
      if (buffer_.complex()) {
        DDS_sequence_psbench_Complex taken = {1, 0, buffer_.complex_sample(), true};
        rc = psbench_ComplexDataReader_take(reader_, &taken, &infos, 1, DDS_ANY_SAMPLE_STATE,
                                            DDS_ANY_VIEW_STATE, DDS_ANY_INSTANCE_STATE);
      } else {
        DDS_sequence_psbench_Bytes taken = {1, 0, buffer_.bytes(), true};
        rc = psbench_BytesDataReader_take(reader_, &taken, &infos, 1, DDS_ANY_SAMPLE_STATE,
                                          DDS_ANY_VIEW_STATE, DDS_ANY_INSTANCE_STATE);
      }
      if (rc == DDS_RETCODE_NO_DATA) return false;
      if (rc != DDS_RETCODE_OK) fail_rc("take", rc);
    } while (!info_.valid_data);
    if (!buffer_.complex() && !buffer_.in_place()) {
      // OpenSplice allocated a buffer of its own: the sample did not fit.
      psbench_Bytes &bytes = buffer_.sample();
      const DDS_unsigned_long got = bytes.payload._length;
      if (bytes.payload._release) DDS_free(bytes.payload._buffer);
      bytes.payload._buffer = nullptr;
      psb::sdk::bad_sample(
          "received a message of %lu bytes, larger than this run's %zu bytes; do both sides "
          "use the same --size?",
          static_cast<unsigned long>(got + psb::sdk::kHeaderSize),
          buffer_.capacity() + psb::sdk::kHeaderSize);
    }
    buffer_.taken(data, len);
    return true;
  }

  // Listener mode: the SDK hands over all there is, counting errors; called on
  // OpenSplice's listener thread of the participant.
  static void on_data_available(void *self, DDS_DataReader) {
    auto *r = static_cast<Reader *>(self);
    r->listener_.drain([&](const void *&data, size_t &len) { return r->take_now(data, len); });
  }

  void destroy() {
    if (waitset_ != nullptr) {
      if (condition_ != nullptr) DDS_WaitSet_detach_condition(waitset_, condition_);
      DDS_free(waitset_);
    }
    if (triggered_ != nullptr) DDS_free(triggered_);
    if (condition_ != nullptr) DDS_DataReader_delete_readcondition(reader_, condition_);
    if (reader_ != nullptr) {
      // Stops listener callbacks (and waits for one in progress) before the reader goes.
      DDS_DataReader_set_listener(reader_, nullptr, DDS_STATUS_MASK_NONE);
      DDS_Subscriber_delete_datareader(ctx_.subscriber, reader_);
    }
    waitset_ = nullptr, triggered_ = nullptr, condition_ = nullptr, reader_ = nullptr;
  }

  Context &ctx_;
  const LocalReaders::Registration local_;  // counted among this process's readers
  samples::ReceiveBuffer<psbench_Bytes, ComplexSample> buffer_;
  DDS_SampleInfo info_{};
  const psb::sdk::Listener listener_;
  DDS_DataReaderListener dds_listener_{};
  DDS_DataReader reader_ = nullptr;
  DDS_ReadCondition condition_ = nullptr;
  DDS_WaitSet waitset_ = nullptr;
  DDS_ConditionSeq *triggered_ = nullptr;
};

}  // namespace psbospl
