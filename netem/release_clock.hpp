// When each packet may leave: arrival + delay + uniform jitter in [-J, +J], the added part
// clamped at 0, and never before the packet ahead of it (as netem does when it does not
// reorder), so jitter changes spacing but not order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

namespace netdelay {

class ReleaseClock {
 public:
  ReleaseClock(int64_t delay_us, int64_t jitter_us, uint64_t seed)
      : delay_ns_(delay_us * 1000), rng_(seed), jitter_(-jitter_us * 1000, jitter_us * 1000) {}

  int64_t release_for(int64_t arrival_ns) {
    int64_t added = std::max<int64_t>(0, delay_ns_ + jitter_(rng_));
    last_ = std::max(arrival_ns + added, last_);
    return last_;
  }

 private:
  int64_t delay_ns_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int64_t> jitter_;
  int64_t last_ = 0;
};

}  // namespace netdelay
