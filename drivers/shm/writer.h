// The writing end of a topic's ring.
//
// Reliability, when the ring is full:
//   best_effort: the new sample is dropped, write() returns 0 and the
//                segment's drop counter goes up; the writer never waits.
//   reliable:    the writer waits until the reader frees a slot: a short spin,
//                then a futex sleep on `tail` (or only spinning with
//                wakeup=spin). If no reader is attached the sample is dropped
//                (volatile: there is nobody to deliver it to); if the reader
//                frees nothing for kReliableBlockNs, write() fails.
#ifndef PSBENCH_SHM_WRITER_H
#define PSBENCH_SHM_WRITER_H

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ring.h"
#include "settings.h"

namespace psbshm {

constexpr int64_t kReliableBlockNs = 10'000'000'000;  // then write() fails

class Writer {
 public:
  // Throws psb::sdk::Error if the segment cannot be opened or has a writer
  // already.
  Writer(Context &ctx, const char *topic);
  ~Writer();

  int matched() const;  // the ring's reader (0 or 1)
  void write(const void *data, size_t len);
  void *loan(size_t len);
  void write_loan(void *sample, size_t len);

 private:
  int reserve();  // 1 = slot free, 0 = drop; throws when a reliable wait fails
  int wait_for_room();
  int drop();
  void publish(size_t len);
  void tear_down();

  Segment seg_;
  RingView ring_;
  bool attached_ = false;
  bool reliable_ = false;
  Wakeup wakeup_ = Wakeup::futex;
  uint32_t head_ = 0;        // our copy of hdr->head (we are its only writer)
  uint32_t idx_ = 0;         // head_ % count
  uint32_t tail_cache_ = 0;  // last tail seen; re-read only when looking full
  uint64_t drops_ = 0;
  std::unique_ptr<unsigned char[]> scratch_;  // loan target for dropped samples
};

}  // namespace psbshm

#endif
