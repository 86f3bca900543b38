// The writing end of a topic's ring (README.md, "Reliability"). A full ring drops the new
// sample under best_effort (the segment counts it); under reliable the writer waits for the
// reader to free a slot, a short spin then futex sleeps on `tail`, drops the sample if no
// reader is attached (volatile: nobody to deliver it to) and fails after kReliableBlockNs.
#ifndef PSBENCH_SHM_WRITER_H
#define PSBENCH_SHM_WRITER_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "segment.h"
#include "settings.h"

namespace psbshm {

constexpr int64_t kReliableBlockNs = 10'000'000'000;  // then write() fails
constexpr int kSpinBeforeSleep = 256;                 // pause loops before the futex
constexpr int64_t kSleepSliceNs = 100'000'000;        // re-check the reader count

// loan()/write_loan(): write straight into the slot. matched(): the ring's one peer.
// No flush(): every write goes out at once.
class Writer {
 public:
  // Throws psb::sdk::Error if the segment cannot be opened or has a writer already.
  Writer(const Settings &s, const char *topic)
      : scratch_(s.use_loan ? new unsigned char[s.max_payload] : nullptr),
        seg_(s, topic, Segment::kWriter),
        reliable_(s.qos.reliability == PSB_RELIABLE),
        wakeup_(s.wakeup),
        head_(seg_.hdr->head.load(std::memory_order_acquire)),
        idx_(head_ % seg_.count),
        tail_cache_(seg_.hdr->tail.load(std::memory_order_acquire)) {}

  int matched() const { return seg_.hdr->readers.load(std::memory_order_acquire); }

  void write(const void *data, size_t len) {
    if (!reserve(len, "message")) return;  // dropped
    __builtin_memcpy(seg_.slot_data(idx_), data, len);
    publish(len);
  }

  void *loan(size_t len) {
    if (reserve(len, "loan")) return seg_.slot_data(idx_);
    // Dropped: hand out scratch memory, which write_loan discards.
    if (!scratch_)
      psb::sdk::fail("ring of %s is full and loans were not enabled (use_loan) at open",
                     seg_.name());
    return scratch_.get();
  }

  void write_loan(void *sample, size_t len) {
    if (scratch_ && sample == scratch_.get()) return;  // this sample was dropped at loan()
    publish(len);  // the SDK checked that sample is the slot loan() returned, len no longer
  }

 private:
  bool has_room() const { return !seg_.full(head_, tail_cache_); }

  // A slot for len bytes (what: "message" or "loan"). true: one is free; false: the sample
  // is dropped. Throws when len is too long or a reliable wait fails.
  bool reserve(size_t len, const char *what) {
    if (len > seg_.slot_size)
      psb::sdk::fail("%s of %zu bytes exceeds max_payload %llu", what, len,
                     static_cast<unsigned long long>(seg_.slot_size));
    if (has_room()) return true;
    tail_cache_ = seg_.hdr->tail.load(std::memory_order_acquire);
    if (has_room()) return true;
    if (!reliable_) return drop();
    return wait_for_room();
  }

  bool wait_for_room() {
    SegmentHeader *h = seg_.hdr;
    for (int i = 0; i < kSpinBeforeSleep; ++i) {
      psb::sdk::cpu_relax();
      tail_cache_ = h->tail.load(std::memory_order_acquire);
      if (has_room()) return true;
    }
    const int64_t deadline = psb::sdk::now_ns() + kReliableBlockNs;
    for (;;) {
      if (h->readers.load(std::memory_order_acquire) == 0) return drop();
      tail_cache_ = h->tail.load(std::memory_order_acquire);
      if (has_room()) return true;
      const int64_t now = psb::sdk::now_ns();
      if (now >= deadline)
        psb::sdk::fail(
            "reliable write waited %lld s for the reader to free a slot of %s; is the reader "
            "still taking?",
            static_cast<long long>(kReliableBlockNs / 1000000000), seg_.name());
      if (wakeup_ == Wakeup::spin) {
        for (int i = 0; i < 64; ++i) psb::sdk::cpu_relax();
        continue;
      }
      psb::sdk::sleep_on(
          &h->tail, &h->writer_waiting, std::min(deadline - now, kSleepSliceNs),
          [&](uint32_t tail) { return seg_.full(head_, tail); }, kShared);
    }
  }

  bool drop() {
    seg_.hdr->drops.store(++drops_, std::memory_order_relaxed);
    return false;
  }

  void publish(size_t len) {
    *seg_.slot_len(idx_) = len;
    head_ = seg_.next(head_);
    idx_ = seg_.next_index(idx_);
    // Release (as seq_cst) publishes the slot.
    seg_.hdr->head.store(head_, std::memory_order_seq_cst);
    psb::sdk::wake_if_waiting(&seg_.hdr->head, &seg_.hdr->reader_waiting, kShared);
  }

  std::unique_ptr<unsigned char[]> scratch_;  // loan target for dropped samples
  Segment seg_;
  const bool reliable_;
  const Wakeup wakeup_;
  uint32_t head_;        // our copy of hdr->head (we are its only writer)
  uint32_t idx_;         // head_ % count
  uint32_t tail_cache_;  // last tail seen; re-read only when looking full
  uint64_t drops_ = 0;
};

}  // namespace psbshm

#endif
