// Throughput accounting: how many measured messages (and bytes) a role sent or received,
// when the first and last went, and how many fell into each one-second bin after the
// first. The bins are allocated and touched before the run (enough for --timeout), so
// counting on the timed path is a few additions: no allocation, no lock.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace psb {

class ThroughputCounter {
 public:
  static constexpr int64_t kBinNs = 1'000'000'000;
  // Bins are kept for at most this many seconds (a week); later events land in the last.
  static constexpr uint64_t kMaxBins = 7 * 24 * 3600 + 2;

  ThroughputCounter() = default;
  // A role never runs longer than --timeout: one bin per second of it, plus slack.
  explicit ThroughputCounter(double timeout_s)
      : bins_(std::min<uint64_t>(kMaxBins, uint64_t(timeout_s < 0 ? 0 : timeout_s) + 2), 0) {}

  void add(int64_t t_ns, uint64_t bytes) {
    if (count_ == 0) first_ns_ = t_ns;
    last_ns_ = t_ns;
    ++count_;
    bytes_ += bytes;
    if (bins_.empty()) return;
    int64_t since = t_ns - first_ns_;
    uint64_t bin = since <= 0 ? 0 : uint64_t(since / kBinNs);
    if (bin >= bins_.size()) bin = bins_.size() - 1;
    ++bins_[bin];
    if (bin + 1 > used_bins_) used_bins_ = bin + 1;
  }

  uint64_t count() const { return count_; }
  uint64_t bytes() const { return bytes_; }
  int64_t first_ns() const { return first_ns_; }
  int64_t last_ns() const { return last_ns_; }
  // The bins up to the last one with an event (empty when nothing was counted).
  std::vector<uint64_t> used_bins() const {
    return std::vector<uint64_t>(bins_.begin(), bins_.begin() + int64_t(used_bins_));
  }

 private:
  std::vector<uint64_t> bins_;
  uint64_t count_ = 0, bytes_ = 0, used_bins_ = 0;
  int64_t first_ns_ = 0, last_ns_ = 0;
};

}  // namespace psb
