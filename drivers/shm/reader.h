// The reading end of a topic's ring, and the listener thread.
//
// take() returns a pointer into the slot (zero copy); the slot is given back
// (tail advanced) by release() or the next take(). Waiting for data:
//   poll:     take(timeout 0) returns at once.
//   wait:     take(timeout > 0) sleeps on a futex on `head` after setting
//             reader_waiting, which is the only case in which the writer makes
//             a FUTEX_WAKE syscall; with wakeup=spin it spins on `head`.
//   listener: a driver thread waits the same way and calls on_data for each
//             sample; destroy stops it with a stop flag plus wake-ups.
// A new reader starts at the current head: samples written before it attached
// are skipped (volatile durability).
#ifndef PSBENCH_SHM_READER_H
#define PSBENCH_SHM_READER_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "psbench/sdk.hpp"
#include "ring.h"
#include "settings.h"

namespace psbshm {

class Reader {
 public:
  // A listener starts the listener thread. Throws psb::sdk::Error on failure.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener);
  ~Reader();

  int matched() const;  // the ring's writer (0 or 1)
  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();

 private:
  void tear_down();
  void advance();  // frees the oldest slot
  // Waits until head != tail_; false on timeout (deadline_ns < 0: none) or,
  // in the listener, on stop.
  bool wait_for_data(int64_t deadline_ns, bool listener);
  void listen();

  Segment seg_;
  RingView ring_;
  bool attached_ = false;
  bool reliable_ = false;
  bool held_ = false;  // a taken sample occupies the slot at tail_
  Wakeup wakeup_ = Wakeup::futex;
  uint32_t tail_ = 0;        // our copy of hdr->tail (we are its only writer)
  uint32_t idx_ = 0;         // tail_ % count
  uint32_t head_cache_ = 0;  // last head seen; re-read only when looking empty

  psb::sdk::Listener on_data_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> exited_{false};
};

}  // namespace psbshm

#endif
