#include "progress_reporter.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "clock.hpp"
#include "psbench/sdk_futex.hpp"

namespace psb {
namespace {

// Off the role's CPU and real-time priority, which this thread inherited.
void run_as_ordinary_thread() {
  sched_param p{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
  cpu_set_t process_cpus;
  if (sched_getaffinity(getpid(), sizeof process_cpus, &process_cpus) == 0)
    pthread_setaffinity_np(pthread_self(), sizeof process_cpus, &process_cpus);
}

}  // namespace

ProgressReporter::ProgressReporter(std::vector<const SampleStore *> stores, double interval_s)
    : stores_(std::move(stores)),
      interval_ns_(interval_s > 0 ? seconds_to_ns(interval_s) : 0),
      seen_recorded_(stores_.size(), 0),
      seen_distinct_(stores_.size(), 0),
      snap_recorded_(stores_.size(), 0),
      snap_distinct_(stores_.size(), 0) {
  if (interval_ns_ > 0) values_.reserve(kMaxValues);
}

void ProgressReporter::start() {
  if (interval_ns_ <= 0 || thread_.joinable()) return;
  start_ns_ = now_ns();
  thread_ = std::thread([this] { loop(); });
}

void ProgressReporter::stop() {
  stop_.store(1, std::memory_order_release);
  sdk::futex_wake_all(&stop_);  // at once: a run's end must not wait for the next interval
  if (thread_.joinable()) thread_.join();
}

void ProgressReporter::loop() {
  run_as_ordinary_thread();
  int64_t last = start_ns_;
  for (int64_t next = start_ns_ + interval_ns_;; next += interval_ns_) {
    // Sleeps until the interval ends or stop() wakes it.
    while (now_ns() < next) {
      if (stop_.load(std::memory_order_acquire)) return;
      const int64_t left = next - now_ns();
      if (left > 0) sdk::futex_wait(&stop_, 0, left);
    }
    const int64_t t = now_ns();
    report(double(t - start_ns_) / 1e9, double(t - last) / 1e9);
    last = t;
  }
}

void ProgressReporter::report(double t_s, double interval_s) {
  // One snapshot per store: what is counted here is exactly what the next line starts from.
  uint64_t new_records = 0, new_distinct = 0, received = 0, kept = 0;
  for (size_t i = 0; i < stores_.size(); ++i) {
    snap_distinct_[i] = stores_[i]->published_distinct();
    snap_recorded_[i] = stores_[i]->published_recorded();
    new_records += snap_recorded_[i] - seen_recorded_[i];
    new_distinct += snap_distinct_[i] - seen_distinct_[i];
    received += snap_distinct_[i];
    kept += snap_recorded_[i];
  }
  // Every stride-th new record: at most kMaxValues latencies for the p50; all for the max.
  const uint64_t stride = new_records / kMaxValues + 1;
  values_.clear();
  int64_t max_ns = 0;
  bool any = false;
  uint64_t k = 0;
  for (size_t i = 0; i < stores_.size(); ++i) {
    const SampleRecord *first = stores_[i]->begin();
    for (const SampleRecord *rec = first + seen_recorded_[i]; rec != first + snap_recorded_[i];
         ++rec, ++k) {
      if (!any || rec->latency_ns > max_ns) max_ns = rec->latency_ns;
      any = true;
      if (k % stride == 0 && values_.size() < kMaxValues) values_.push_back(rec->latency_ns);
    }
    seen_recorded_[i] = snap_recorded_[i];
    seen_distinct_[i] = snap_distinct_[i];
  }
  const double rate = interval_s > 0 ? double(new_distinct) / interval_s : 0.0;
  if (values_.empty()) {
    std::printf("PROGRESS t_s=%.3f received=%" PRIu64 " rate_hz=%.1f kept=%" PRIu64 "\n", t_s,
                received, rate, kept);
  } else {
    // Nearest rank: the ceil(n/2)-th smallest.
    auto mid = values_.begin() + (values_.size() + 1) / 2 - 1;
    std::nth_element(values_.begin(), mid, values_.end());
    std::printf("PROGRESS t_s=%.3f received=%" PRIu64 " rate_hz=%.1f p50_ns=%" PRId64
                " max_ns=%" PRId64 " kept=%" PRIu64 "\n",
                t_s, received, rate, *mid, max_ns, kept);
  }
  std::fflush(stdout);
}

}  // namespace psb
