// Hands messages from the thread that took them (a driver's listener, or a module's
// receiver thread in wait mode) to the module's role thread: a single-producer
// single-consumer ring of copies of the first bytes of each message (header, graph
// header, origin table) with its arrival time. Allocated and touched up front; a full
// ring drops the new message and counts it, never blocks and never allocates.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

namespace psb {

class Inbox {
 public:
  static constexpr uint64_t kSlots = 1024;

  struct Entry {
    int64_t arrival_ns;
    uint64_t len;  // the whole message's length; bytes holds min(len, capacity)
    const uint8_t *bytes;
  };

  // bytes: how much of each message is kept (what the module reads of it).
  explicit Inbox(uint64_t bytes)
      : capacity_(bytes), stride_((16 + bytes + 7) / 8 * 8), ring_(kSlots * stride_, 0) {}

  // Producer only.
  bool push(const void *data, uint64_t len, int64_t t) {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) == kSlots) {
      overflow_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    uint8_t *slot = &ring_[(h % kSlots) * stride_];
    std::memcpy(slot, &t, 8);
    std::memcpy(slot + 8, &len, 8);
    std::memcpy(slot + 16, data, std::min(len, capacity_));
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

  // Consumer only: the oldest message, or false when empty; pop() when done with it.
  bool front(Entry &e) const {
    const uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t == head_.load(std::memory_order_acquire)) return false;
    const uint8_t *slot = &ring_[(t % kSlots) * stride_];
    std::memcpy(&e.arrival_ns, slot, 8);
    std::memcpy(&e.len, slot + 8, 8);
    e.bytes = slot + 16;
    return true;
  }
  void pop() { tail_.store(tail_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
  uint64_t overflow() const { return overflow_.load(std::memory_order_relaxed); }

 private:
  const uint64_t capacity_, stride_;
  std::vector<uint8_t> ring_;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<uint64_t> overflow_{0};
};

}  // namespace psb
