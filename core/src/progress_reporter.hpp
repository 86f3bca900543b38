// Interval lines while a measuring role runs (ping, sub): every interval, on stdout,
// "PROGRESS t_s=… received=… rate_hz=… p50_ns=… max_ns=… kept=…", from a thread of its own
// that only reads what the role has published in its sample stores. The role's timed
// path is untouched: the thread runs SCHED_OTHER on the process's CPUs (not the role's
// CPU or priority), and allocates only when it starts.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "sample_store.hpp"

namespace psb {

class ProgressReporter {
 public:
  // interval_s <= 0: no lines, no thread.
  ProgressReporter(std::vector<const SampleStore *> stores, double interval_s);
  ~ProgressReporter() { stop(); }
  ProgressReporter(const ProgressReporter &) = delete;
  ProgressReporter &operator=(const ProgressReporter &) = delete;

  void start();  // the measurement begins now
  void stop();   // joins the thread; idempotent

  // Latencies the interval's p50 is taken from, at most (a longer interval is sampled
  // evenly); its maximum always covers every record.
  static constexpr size_t kMaxValues = 1 << 16;

 private:
  void loop();
  void report(double t_s, double interval_s);

  std::vector<const SampleStore *> stores_;
  int64_t interval_ns_;
  std::vector<uint64_t> seen_recorded_, seen_distinct_, snap_recorded_, snap_distinct_;
  std::vector<int64_t> values_;
  std::atomic<uint32_t> stop_{0};  // 1: stop; a futex word, so stop() wakes the thread
  std::thread thread_;
  int64_t start_ns_ = 0;
};

}  // namespace psb
