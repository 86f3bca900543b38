// A writer of the run's type (samples::SendSample: a bytes sample points straight at the
// node's message, so the only copy on the send side is OpenSplice's own, into the domain's
// database on the process's heap).
#pragma once

#include "context.h"
#include "psbench/sdk_dds_status.hpp"
#include "samples.h"

namespace psbospl {

// How long a reliable writer's destruction waits for its readers to leave.
constexpr std::chrono::seconds kReadersLeave{10};

class Writer {
 public:
  // Throws psb::sdk::Error if the writer cannot be made.
  Writer(Context &ctx, const char *topic)
      : ctx_(ctx), topic_(topic), sample_(ctx.settings.complex, ctx.settings.elements) {
    auto q = allocated(DDS_DataWriterQos__alloc());
    check_rc(DDS_Publisher_get_default_datawriter_qos(ctx.publisher, q.get()), "writer QoS");
    apply_qos(*q, ctx.settings);
    writer_ = checked(DDS_Publisher_create_datawriter(ctx.publisher, ctx.topic(topic), q.get(),
                                                      nullptr, DDS_STATUS_MASK_NONE),
                      "cannot create a writer");
  }
  // OpenSplice has no wait for remote acknowledgements (README, "Drain and close"): a
  // reliable writer hands what the kernel still holds for DDSI2 over (its pending resends,
  // at most 1 s). When its topic has no reader in this process (readers here have every
  // sample once write() returns), it then waits for its readers, all in other processes,
  // to leave, at most kReadersLeave: a psbench reader leaves once it has the end marker,
  // the last thing written. Otherwise, or if they have not left, the context gives DDSI2
  // its writer linger before it closes the domain.
  // Federated (opensplice5): nothing of this, a sample is in the readers' caches in
  // spliced's shared memory once write() returns.
  ~Writer() {
#ifndef PSBENCH_OSPL_FEDERATED
    if (ctx_.settings.qos.reliability == PSB_RELIABLE) {
      const DDS_Duration_t handover = {1, 0};
      DDS_DataWriter_wait_for_acknowledgments(writer_, &handover);
      if (!LocalReaders::instance().any(topic_)) {
        const auto end = std::chrono::steady_clock::now() + kReadersLeave;
        while (matched() > 0 && std::chrono::steady_clock::now() < end)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (matched() != 0) ctx_.linger = true;
    }
#endif
    DDS_Publisher_delete_datawriter(ctx_.publisher, writer_);
  }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  void write(const void *data, size_t len) {
    void *sample = sample_.load(data, len);
    const DDS_ReturnCode_t rc =
        sample_.complex() ? psbench_ComplexDataWriter_write(
                                writer_, static_cast<psbench_Complex *>(sample), DDS_HANDLE_NIL)
                          : psbench_BytesDataWriter_write(
                                writer_, static_cast<psbench_Bytes *>(sample), DDS_HANDLE_NIL);
    if (rc != DDS_RETCODE_OK) failed(rc, len);
  }

  int matched() const {  // matched readers
    return psb::sdk::dds::matched(writer_, &DDS_DataWriter_get_publication_matched_status);
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void failed(DDS_ReturnCode_t rc, size_t len) const {
    if (rc == DDS_RETCODE_TIMEOUT)
      fail(
          "a reliable write of %zu bytes found no room in the writer's history "
          "within %d s (the reader is not keeping up)",
          len, kMaxBlockingTime.sec);
    fail_rc("write", rc);
  }

  Context &ctx_;
  const std::string topic_;
  samples::SendSample<psbench_Bytes, ComplexSample> sample_;
  DDS_DataWriter writer_ = nullptr;
};

}  // namespace psbospl
