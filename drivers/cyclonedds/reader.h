// A reader of the run's type, in one of the node's notify modes:
//   poll:     take() takes without waiting;
//   wait:     take() waits on a waitset (a read condition on the reader) up to the
//             timeout, then takes;
//   listener: Cyclone's on_data_available, on Cyclone's own thread, takes every
//             available sample and calls on_data for each; deleting the reader waits
//             for a callback in progress and stops further ones.
// The node gets one contiguous buffer, allocated here once (max_payload bytes): bytes
// deserialize straight into it (the payload sequence points into it, _release = false),
// complex samples deserialize into a sample kept across takes (Cyclone reuses its
// sequences and strings) and only the header goes into the buffer.
#pragma once

#include <atomic>
#include <memory>

#include "context.h"
#include "psbench/sdk.hpp"
#include "samples.h"

namespace psbcyc {

class Reader {
 public:
  // Throws psb::sdk::Error if the reader cannot be made.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener);
  ~Reader();
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  int matched() const;  // matched writers
  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb::sdk::CounterSink put) const;

 private:
  void destroy() noexcept;
  // true = a sample is in buffer_ (length in len), false = none now; throws on an error.
  bool take_now(dds_entity_t reader, size_t &len);
  void unpack(size_t &len);
  static void on_data_available(dds_entity_t reader, void *self);
  void drain(dds_entity_t reader);  // listener: takes and hands over all there is

  const Context &ctx_;
  dds_entity_t topic_ = 0, reader_ = 0, waitset_ = 0, condition_ = 0;
  const bool complex_;
  const uint32_t elements_;
  const size_t payload_capacity_;  // bytes after the header that a sample may carry
  std::unique_ptr<uint8_t[]> buffer_;
  psbench_Bytes bytes_{};
  psbench_Complex complex_sample_{};
  const psb::sdk::Listener listener_;
  bool bad_sample_ = false;  // the last take_now() failed on a sample it took
  std::atomic<bool> closing_{false};  // set before the reader is deleted
  std::atomic<bool> listener_error_reported_{false};
};

}  // namespace psbcyc
