// The reading end of a topic's ring, and the listener thread (README.md, "Notification"):
// take() returns a pointer into the slot (zero copy), given back by release() or the next
// take(); waits spin on `head` or sleep on it as a futex, and only a reader that announced
// its sleep (reader_waiting) costs the writer a FUTEX_WAKE.
#ifndef PSBENCH_SHM_READER_H
#define PSBENCH_SHM_READER_H

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "segment.h"
#include "settings.h"

namespace psbshm {

class Reader {
 public:
  // A listener starts the listener thread. Throws psb::sdk::Error on failure.
  Reader(const Settings &s, const char *topic, psb::sdk::Listener listener)
      : seg_(listening(s, listener), topic, Segment::kReader),
        reliable_(s.qos.reliability == PSB_RELIABLE),
        wakeup_(s.wakeup),
        on_data_(listener) {
    // Volatile: skip whatever was written before this reader existed.
    tail_ = seg_.hdr->head.load(std::memory_order_acquire);
    head_cache_ = tail_;
    idx_ = tail_ % seg_.count;
    seg_.hdr->tail.store(tail_, std::memory_order_seq_cst);
    psb::sdk::wake_if_waiting(&seg_.hdr->tail, &seg_.hdr->writer_waiting, kShared);
    if (on_data_) thread_ = std::thread([this] { listen(); });
  }

  ~Reader() {
    if (!thread_.joinable()) return;
    stop_.store(true, std::memory_order_seq_cst);
    // The thread may be between its stop check and its futex_wait, where one
    // wake would be lost: keep waking until it has left.
    while (!exited_.load(std::memory_order_acquire)) {
      psb::sdk::futex_wake_all(&seg_.hdr->head, kShared);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    thread_.join();
  }

  int matched() const { return seg_.hdr->writers.load(std::memory_order_acquire); }

  // The SDK's take() tries, then waits (psb::sdk::take_waiting).
  bool try_take(const void *&data, size_t &len) {
    if (on_data_) psb::sdk::fail("take() is not used in listener mode");
    release();
    if (!ready()) return false;
    held_ = true;
    const uint64_t n = *seg_.slot_len(idx_);
    if (n > seg_.slot_size)
      psb::sdk::fail("corrupt slot in %s: length %llu > max_payload %llu", seg_.name(),
                     static_cast<unsigned long long>(n),
                     static_cast<unsigned long long>(seg_.slot_size));
    data = seg_.slot_data(idx_);
    len = static_cast<size_t>(n);
    return true;
  }

  // Waits until head != tail_; false on timeout (timeout_ns < 0: none) or when the
  // listener stops (stop_ is set only then).
  bool wait(int64_t timeout_ns) {
    const int64_t deadline_ns = timeout_ns < 0 ? -1 : psb::sdk::now_ns() + timeout_ns;
    SegmentHeader *h = seg_.hdr;
    for (;;) {
      if (stop_.load(std::memory_order_acquire)) return false;
      if (wakeup_ == Wakeup::spin) {
        for (int i = 0; i < 64; ++i) {
          psb::sdk::cpu_relax();
          if (ready()) return true;
        }
        if (deadline_ns >= 0 && psb::sdk::now_ns() >= deadline_ns) return false;
        continue;
      }
      int64_t rel = -1;
      if (deadline_ns >= 0) {
        rel = deadline_ns - psb::sdk::now_ns();
        if (rel <= 0) return false;
      }
      psb::sdk::sleep_on(
          &h->head, &h->reader_waiting, rel,
          [&](uint32_t seen) { return seen == tail_ && !stop_.load(std::memory_order_seq_cst); },
          kShared);
      if (ready()) return true;
    }
  }

  void release() {
    if (held_) advance();
  }

 private:
  // on_data is given exactly in listener mode (checked before the segment is opened).
  static const Settings &listening(const Settings &s, const psb::sdk::Listener &listener) {
    if (bool(listener) != (s.notify == PSB_NOTIFY_LISTENER))
      psb::sdk::fail("on_data must be given exactly in listener mode");
    return s;
  }

  // Whether a sample is at tail_; head is re-read only when the last one seen says not.
  bool ready() {
    return head_cache_ != tail_ ||
           (head_cache_ = seg_.hdr->head.load(std::memory_order_acquire)) != tail_;
  }

  // Frees the oldest slot.
  void advance() {
    tail_ = seg_.next(tail_);
    idx_ = seg_.next_index(idx_);
    held_ = false;
    if (!reliable_)  // a best_effort writer never sleeps on tail
      return seg_.hdr->tail.store(tail_, std::memory_order_release);
    seg_.hdr->tail.store(tail_, std::memory_order_seq_cst);
    psb::sdk::wake_if_waiting(&seg_.hdr->tail, &seg_.hdr->writer_waiting, kShared);
  }

  void listen() {
    while (!stop_.load(std::memory_order_acquire)) {
      if (!ready() && !wait(-1)) continue;  // stopping
      const uint64_t n = *seg_.slot_len(idx_);
      if (n <= seg_.slot_size)  // a corrupt length is skipped, never delivered
        on_data_(seg_.slot_data(idx_), static_cast<size_t>(n));
      advance();
    }
    exited_.store(true, std::memory_order_release);
  }

  Segment seg_;  // first: opened before, and closed after, everything below
  const bool reliable_;
  const Wakeup wakeup_;
  bool held_ = false;        // a taken sample occupies the slot at tail_
  uint32_t tail_ = 0;        // our copy of hdr->tail (we are its only writer)
  uint32_t idx_ = 0;         // tail_ % count
  uint32_t head_cache_ = 0;  // last head seen; re-read only when looking empty

  const psb::sdk::Listener on_data_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> exited_{false};
};

}  // namespace psbshm

#endif
