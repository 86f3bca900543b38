// A writer of the run's type (samples::SendSample: a bytes sample points straight at the
// node's message, so the only copy on the send side is Cyclone's serialization).
#pragma once

#include "context.h"
#include "psbench/sdk_dds_status.hpp"

namespace psbcyc {

class Writer {
 public:
  // Throws psb::sdk::Error if the writer cannot be made.
  Writer(Context &ctx, const char *topic)
      : ctx_(ctx),
        sample_(ctx.settings.complex, ctx.settings.elements),
        topic_(create_topic(ctx, topic)),
        writer_(checked(dds_create_writer(ctx.participant, topic_, ctx.qos, nullptr),
                        "cannot create a writer")) {
    require_shm(ctx, writer_, "writer");
  }

  void write(const void *data, size_t len) {
    const dds_return_t rc = dds_write(writer_, sample_.load(data, len));
    if (rc != DDS_RETCODE_OK) failed(rc, len);
  }

  // Sends what WriteBatch (option write_batch or the user's configuration) holds back.
  void flush() {
    dds_write_flush(writer_);  // returns nothing in Cyclone 0.10.2: it cannot fail
  }

  // ABI drain: true once every matched reliable reader acknowledged everything written,
  // false at the timeout, throws on an error.
  bool drain(int64_t timeout_ns) {
    // The flush sends what WriteBatch holds back; after it a best-effort writer holds
    // nothing (dds_write sends at once), and dds_wait_for_acks returns OK at once for it.
    dds_write_flush(writer_);
    const dds_return_t rc = dds_wait_for_acks(writer_, timeout_ns);
    if (rc == DDS_RETCODE_OK) return true;
    if (rc == DDS_RETCODE_TIMEOUT) return false;
    fail_dds("dds_wait_for_acks", rc);
  }

  int matched() const {  // matched readers
    return psb::sdk::dds::matched(writer_, &dds_get_publication_matched_status);
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void failed(dds_return_t rc, size_t len) const {
    if (rc == DDS_RETCODE_TIMEOUT)
      fail(
          "a reliable write of %zu bytes found no room in the writer's history "
          "within %lld ms (the reader is not keeping up)",
          len, static_cast<long long>(kMaxBlockingTime / DDS_MSECS(1)));
    if (rc == DDS_RETCODE_OUT_OF_RESOURCES && ctx_.settings.transport == Transport::shm)
      fail(
          "write of %zu bytes: no iceoryx chunk that large (iox-roudi's mempools "
          "are too small for it)",
          len);
    fail_dds("write", rc);
  }

  const Context &ctx_;
  samples::SendSample<psbench_Bytes, ComplexSample> sample_;
  const Entity topic_, writer_;  // deleted writer first
};

}  // namespace psbcyc
