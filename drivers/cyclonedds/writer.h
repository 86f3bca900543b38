// A writer of the run's type. bytes: the sample's payload sequence points straight at
// the node's message (_release = false), so the only copy on the send side is Cyclone's
// serialization. complex: the sample is built once here; a write only sets its header.
#pragma once

#include "context.h"
#include "samples.h"

namespace psbcyc {

class Writer {
 public:
  static Writer *create(Context *ctx, const char *topic, psb_error *err);
  ~Writer();

  int write(const void *data, size_t len, psb_error *err);
  // Sends what WriteBatch (option write_batch or the user's configuration) holds back.
  int flush(psb_error *err);
  // ABI drain: flushes any batch, then dds_wait_for_acks: 1 once every matched reliable
  // reader acknowledged everything written, 0 at the timeout, -1 on an error.
  int drain(int64_t timeout_ns, psb_error *err);
  int matched_readers() const;

 private:
  Writer() = default;
  int failed(dds_return_t rc, size_t len, psb_error *err) const;

  const Context *ctx_ = nullptr;
  dds_entity_t topic_ = 0, writer_ = 0;
  bool complex_ = false;
  psbench_Bytes bytes_{};
  psbench_Complex complex_sample_{};
};

}  // namespace psbcyc
