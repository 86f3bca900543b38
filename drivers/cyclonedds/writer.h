// A writer of the run's type. bytes: the sample's payload sequence points straight at
// the node's message (_release = false), so the only copy on the send side is Cyclone's
// serialization. complex: the sample is built once here; a write only sets its header.
#pragma once

#include "context.h"
#include "samples.h"

namespace psbcyc {

class Writer {
 public:
  // Throws psb::sdk::Error if the writer cannot be made.
  Writer(Context &ctx, const char *topic);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  void write(const void *data, size_t len);
  // Sends what WriteBatch (option write_batch or the user's configuration) holds back.
  void flush();
  // ABI drain: flushes any batch, then dds_wait_for_acks: true once every matched
  // reliable reader acknowledged everything written, false at the timeout, throws on an
  // error.
  bool drain(int64_t timeout_ns);
  int matched() const;  // matched readers

 private:
  void destroy() noexcept;
  [[noreturn, gnu::cold, gnu::noinline]] void failed(dds_return_t rc, size_t len) const;

  const Context &ctx_;
  dds_entity_t topic_ = 0, writer_ = 0;
  const bool complex_;
  psbench_Bytes bytes_{};
  psbench_Complex complex_sample_{};
};

}  // namespace psbcyc
