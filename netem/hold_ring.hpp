// The packets being held, oldest first. Release times never decrease along the ring (order
// is kept), so the front is always the next packet due and a FIFO is all that is needed.
// Storage is allocated once, at start-up; push and pop never allocate.
#pragma once

#include <cstdint>
#include <vector>

namespace netdelay {

struct Held {
  uint32_t id;         // the kernel's packet id, all a verdict needs
  int64_t arrival_ns;  // CLOCK_MONOTONIC when read from the queue
  int64_t release_ns;  // CLOCK_MONOTONIC when its NF_ACCEPT is due
};

class HoldRing {
 public:
  explicit HoldRing(uint32_t capacity) : slots_(capacity) {}

  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == slots_.size(); }
  uint32_t size() const { return size_; }
  const Held& front() const { return slots_[head_]; }

  void push(const Held& h) {
    slots_[(head_ + size_) % slots_.size()] = h;
    ++size_;
  }
  void pop() {
    head_ = (head_ + 1) % slots_.size();
    --size_;
  }

 private:
  std::vector<Held> slots_;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace netdelay
