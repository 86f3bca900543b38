// Durability persistent: how often an endpoint whose broker went away tries to connect
// again. At most one attempt per kRetryNs, never a busy loop (a waiting reader sleeps
// until the next attempt is due).
#ifndef PSBENCH_RABBITMQ_RETRY_PACER_H
#define PSBENCH_RABBITMQ_RETRY_PACER_H

#include <algorithm>
#include <cstdint>
#include <ctime>

namespace psbrabbitmq {

constexpr int64_t kRetryNs = 100'000'000;

class RetryPacer {
 public:
  static int64_t now_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
  }
  bool due() const { return now_ns() >= next_ns_; }
  void attempted() { next_ns_ = now_ns() + kRetryNs; }
  // Sleeps until an attempt is due, or timeout_ns, whichever comes first.
  void sleep_until_due(int64_t timeout_ns) const {
    const int64_t ns = std::min(timeout_ns, next_ns_ - now_ns());
    if (ns <= 0) return;
    const timespec ts{ns / 1'000'000'000, ns % 1'000'000'000};
    nanosleep(&ts, nullptr);
  }

 private:
  int64_t next_ns_ = 0;  // the first attempt after a loss is due at once
};

}  // namespace psbrabbitmq

#endif
