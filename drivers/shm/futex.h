// How each side of a topic's ring waits for the other and wakes it: futex
// waits and wake-ups, and spinning. Header-only: this is the timed path, so
// nothing here allocates, locks or formats.
#ifndef PSBENCH_SHM_FUTEX_H
#define PSBENCH_SHM_FUTEX_H

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
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

inline void futex_wake(std::atomic<uint32_t> *word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Each side sleeps on the other's counter (the reader on head, the writer on
// tail) only after announcing it in a flag (reader_waiting, writer_waiting),
// and the other side makes the FUTEX_WAKE syscall only when it finds that flag
// set. Both sides store first and load second, all seq_cst, so one of the two
// sees the other: no wake-up is lost, and none is made for a side that is busy.

// Stores the counter the other side may sleep on, and wakes it if it announced that.
inline void store_and_wake(std::atomic<uint32_t> *word, uint32_t value,
                           std::atomic<uint32_t> *waiting) {
  word->store(value, std::memory_order_seq_cst);
  if (waiting->load(std::memory_order_seq_cst) != 0 &&
      waiting->exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake(word);
}

// Announces the sleep, re-reads the other side's counter and sleeps on it (at most rel_ns,
// < 0: no limit) only while stay(value) holds. The caller re-checks in every case.
template <class Stay>
inline void sleep_on(std::atomic<uint32_t> *word, std::atomic<uint32_t> *waiting, int64_t rel_ns,
                     Stay &&stay) {
  waiting->store(1, std::memory_order_seq_cst);
  const uint32_t seen = word->load(std::memory_order_seq_cst);
  if (stay(seen)) futex_wait(word, seen, rel_ns);
  waiting->store(0, std::memory_order_relaxed);
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

}  // namespace psbshm

#endif
