// Open-loop send schedule: message i is due at start + i * period, whatever happened
// to message i-1, so latency measured from the due time shows stalls.
#pragma once
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "clock.hpp"

namespace psb {

class OpenLoopSchedule {
 public:
  OpenLoopSchedule(int64_t start_ns, double rate_hz)
      : start_ns_(start_ns), period_ns_(1e9 / rate_hz) {}

  int64_t due_ns(uint64_t i) const { return start_ns_ + int64_t(double(i) * period_ns_); }
  double period_ns() const { return period_ns_; }

 private:
  int64_t start_ns_;
  double period_ns_;
};

// Sleeps (or spins) until the absolute CLOCK_MONOTONIC time t_ns.
inline void wait_until(int64_t t_ns, bool spin) {
  if (spin) {
    while (now_ns() < t_ns) {
    }
    return;
  }
  timespec ts{time_t(t_ns / 1'000'000'000), long(t_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace psb
