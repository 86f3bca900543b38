// Which of the most recent sequence numbers of one writer were already seen, so a
// duplicate is told from a reordered arrival without a slot per sequence number (a
// store indexed by sequence number fills up long before it is full once messages are
// lost). A ring of bits covering the kWindow numbers up to the highest seen; older
// numbers cannot be checked and are counted as such. Preallocated: no allocation on
// the timed path, and each new highest number clears only the bits it passes.
#pragma once
#include <cstdint>
#include <vector>

namespace psb {

class SeqWindow {
 public:
  static constexpr uint64_t kWindow = uint64_t(1) << 24;  // 16 Mi numbers, 2 MiB
  enum class Seen { first, duplicate, too_old };

  SeqWindow() : bits_(kWindow / 64, 0) {}

  Seen mark(uint64_t seq) {
    if (!any_) {
      any_ = true;
      highest_ = seq;
      set(seq);
      return Seen::first;
    }
    if (seq > highest_) {
      clear_after_highest(seq);
      highest_ = seq;
      set(seq);
      return Seen::first;
    }
    if (highest_ - seq >= kWindow) return Seen::too_old;
    if (test(seq)) return Seen::duplicate;
    set(seq);
    return Seen::first;
  }

  bool any() const { return any_; }
  uint64_t highest() const { return highest_; }

 private:
  void set(uint64_t seq) { bits_[(seq % kWindow) / 64] |= uint64_t(1) << (seq % 64); }
  bool test(uint64_t seq) const { return bits_[(seq % kWindow) / 64] >> (seq % 64) & 1; }
  // The bits of highest_+1 .. seq belonged to numbers a window older: clear them.
  void clear_after_highest(uint64_t seq) {
    if (seq - highest_ >= kWindow) {
      for (auto &w : bits_) w = 0;
      return;
    }
    for (uint64_t s = highest_ + 1; s <= seq;) {
      uint64_t word = (s % kWindow) / 64, bit = s % 64;
      if (bit == 0 && seq - s >= 63) {
        bits_[word] = 0;
        s += 64;
      } else {
        bits_[word] &= ~(uint64_t(1) << bit);
        ++s;
      }
    }
  }

  std::vector<uint64_t> bits_;
  uint64_t highest_ = 0;
  bool any_ = false;
};

}  // namespace psb
