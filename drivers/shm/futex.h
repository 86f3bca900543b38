// Futex, spin and clock helpers for the shm driver. Header-only: these sit on
// the timed path, so nothing here allocates, locks or formats.
#ifndef PSBENCH_SHM_FUTEX_H
#define PSBENCH_SHM_FUTEX_H

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace psbshm {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futex words must be plain 32-bit integers");
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be lock-free to live in shared memory");

// The words live in a MAP_SHARED segment mapped by several processes, so the
// shared (not _PRIVATE) futex operations are used.

// Sleeps while *word == expected, at most rel_ns (< 0: no limit). Returns when
// woken, on timeout, on a signal or at once if the value already differs; the
// caller re-checks its condition in every case.
inline void futex_wait(std::atomic<uint32_t> *word, uint32_t expected, int64_t rel_ns) {
  timespec ts;
  timespec *tsp = nullptr;
  if (rel_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(rel_ns / 1000000000);
    ts.tv_nsec = static_cast<long>(rel_ns % 1000000000);
    tsp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT, expected, tsp, nullptr, 0);
}

inline void futex_wake(std::atomic<uint32_t> *word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace psbshm

#endif
