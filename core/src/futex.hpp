// Futex wait/wake on a 32-bit atomic: a wake-up with a timeout that neither allocates
// nor takes a lock (std::atomic::wait has no timeout).
#pragma once
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace psb {

// Returns when *word != expected, on a wake-up, or after timeout_ns (< 0: no timeout).
inline void futex_wait(std::atomic<uint32_t> *word, uint32_t expected, int64_t timeout_ns) {
  timespec ts{}, *tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1'000'000'000;
    ts.tv_nsec = timeout_ns % 1'000'000'000;
    tsp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr,
          0);
}

inline void futex_wake_all(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

}  // namespace psb
