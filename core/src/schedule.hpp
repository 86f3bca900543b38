// Open-loop send schedule: message i is due at start + i * period, whatever happened
// to message i-1, so latency measured from the due time shows stalls. A sender that is
// behind never waits: it sends at once and its lateness (send - due) is counted.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <ctime>

#include "clock.hpp"
#include "config.hpp"

namespace psb {

class OpenLoopSchedule {
 public:
  OpenLoopSchedule(int64_t start_ns, double rate_hz)
      : start_ns_(start_ns), period_ns_(1e9 / rate_hz) {}

  int64_t due_ns(uint64_t i) const { return start_ns_ + int64_t(double(i) * period_ns_); }
  double period_ns() const { return period_ns_; }
  // Every message from now on due this much later (a pause the sender was told to take).
  void delay(int64_t ns) { start_ns_ += ns; }

 private:
  int64_t start_ns_;
  double period_ns_;
};

// Waits until the absolute CLOCK_MONOTONIC time t_ns; returns at once when it has
// passed (a sleep costs tens of microseconds on a VM even when it has nothing to wait
// for). hybrid sleeps until spin_ns before t_ns, then spins: a sleep alone wakes late.
inline void wait_until(int64_t t_ns, SendWait mode, int64_t spin_ns) {
  int64_t now = now_ns();
  if (now >= t_ns) return;
  if (mode != SendWait::spin) {
    const int64_t wake = mode == SendWait::sleep ? t_ns : t_ns - spin_ns;
    if (wake > now) {
      timespec ts{time_t(wake / 1'000'000'000), long(wake % 1'000'000'000)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
    }
    if (mode == SendWait::sleep) return;
  }
  while (now_ns() < t_ns) {
  }
}

// How well an open-loop sender kept its schedule (ping and pub; docs/node.md).
struct ScheduleCounts {
  bool open_loop = false;
  double period_ns = 0;
  uint64_t due = 0;        // measured messages due within the window (--count or --duration)
  uint64_t attempted = 0;  // writes begun, failed ones included
  uint64_t behind = 0;     // written more than one period after they were due
  int64_t max_lateness_ns = 0;
  uint64_t not_sent() const { return due > attempted ? due - attempted : 0; }
  void on_write(int64_t lateness_ns) {
    ++attempted;
    if (lateness_ns > max_lateness_ns) max_lateness_ns = lateness_ns;
    if (double(lateness_ns) > period_ns) ++behind;
  }
};

}  // namespace psb
