// A reader of the run's type in one of the node's notify modes (README, "Notify
// modes"). The node gets one contiguous buffer (samples::ReceiveBuffer): bytes
// deserialize straight into it, complex samples into a sample kept across takes (Cyclone
// reuses its sequences and strings) and only the header goes into the buffer.
#pragma once

#include "context.h"
#include "psbench/sdk_dds_status.hpp"

namespace psbcyc {

class Reader {
 public:
  // Throws psb::sdk::Error if the reader cannot be made.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
      : buffer_(ctx.settings.complex, ctx.settings.elements, ctx.settings.max_payload),
        listener_(listener) {
    topic_ = create_topic(ctx, topic);
    // Cyclone copies the listener into the reader: ours goes at the end of the scope.
    const psb::sdk::Owned<dds_listener_t *, &dds_delete_listener> dds_listener =
        listener_ ? dds_create_listener(this) : nullptr;
    if (dds_listener != nullptr) dds_lset_data_available(dds_listener, &Reader::on_data_available);
    reader_ = checked(dds_create_reader(ctx.participant, topic_, ctx.qos, dds_listener),
                      "cannot create a reader");
    require_shm(ctx, reader_, "reader");
    if (ctx.settings.notify == PSB_NOTIFY_WAIT) {
      const char *what = "cannot set up the reader's waitset";
      waitset_ = checked(dds_create_waitset(ctx.participant), what);
      condition_ = checked(dds_create_readcondition(reader_, DDS_ANY_STATE), what);
      checked(dds_waitset_attach(waitset_, condition_, 0), what);
    }
  }
  // The SDK's take() tries, then waits (psb::sdk::take_waiting).
  bool try_take(const void *&data, size_t &len) { return take_now(reader_, data, len); }
  // Wait mode: the read condition triggers while a sample is waiting. Poll mode (the
  // node never waits then): tried again at once.
  bool wait(int64_t timeout_ns) {
    if (waitset_ == 0) return true;
    const dds_duration_t timeout = timeout_ns < 0 ? DDS_INFINITY : timeout_ns;
    return checked(dds_waitset_wait(waitset_, nullptr, 0, timeout), "waiting for data") > 0;
  }

  int matched() const {  // matched writers
    return psb::sdk::dds::matched(reader_, &dds_get_subscription_matched_status);
  }

  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb::sdk::CounterSink put) const {
    psb::sdk::dds::put_sample_statuses(put, reader_, &dds_get_sample_lost_status,
                                       &dds_get_sample_rejected_status);
  }

 private:
  // true = a sample is in buffer_ (data, length in len), false = none now; throws on an
  // error (psb::sdk::BadSample for a sample not of this run).
  bool take_now(dds_entity_t reader, const void *&data, size_t &len) {
    void *sample = buffer_.next();
    dds_sample_info_t info;
    do {  // skipping what carries no data (e.g. "no writers left" on the instance)
      if (checked(dds_take(reader, &sample, &info, 1, 1), "take") == 0) return false;
    } while (!info.valid_data);
    buffer_.taken(data, len);
    return true;
  }

  // Listener mode: the SDK hands over all there is, counting errors. The reader comes
  // from Cyclone: the callback may run before reader_ is set. An error while the SDK
  // deletes the reader (a handle no longer taken from) is not counted.
  static void on_data_available(dds_entity_t reader, void *self) {
    auto *r = static_cast<Reader *>(self);
    r->listener_.drain(
        [&](const void *&data, size_t &len) { return r->take_now(reader, data, len); });
  }

  samples::ReceiveBuffer<psbench_Bytes, ComplexSample> buffer_;
  const psb::sdk::Listener listener_;
  // Deleted in reverse order (the waitset first, the topic last): deleting the reader
  // waits for a listener callback in progress.
  Entity topic_, reader_, condition_, waitset_;
};

}  // namespace psbcyc
