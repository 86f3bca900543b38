// psbench driver SDK: futex waits and wake-ups on a 32-bit atomic, the handshake that makes
// a wake-up cost a syscall only when someone sleeps (sleep_on, wake_if_waiting), and one
// turn of a spin (cpu_relax). The node's waits (core/src) and shm's ring use them, and
// sdk.hpp's wait_until spins with cpu_relax (sdk.hpp includes this header). Written for the
// timed path: nothing here allocates, locks or formats.
#ifndef PSBENCH_SDK_FUTEX_HPP
#define PSBENCH_SDK_FUTEX_HPP

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace psb::sdk {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futex words must be plain 32-bit integers");
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be lock-free to live in shared memory");

// Where a futex word lives: in this process only (the cheaper FUTEX_*_PRIVATE operations)
// or in memory that several processes map (MAP_SHARED, as shm's ring).
enum class FutexScope { process, shared };

// Sleeps while *word == expected, at most timeout_ns (< 0: no limit). Returns when woken, on
// timeout, on a signal or at once if the value already differs: the caller re-checks its
// condition in every case. (std::atomic::wait has no timeout.)
inline void futex_wait(std::atomic<uint32_t> *word, uint32_t expected, int64_t timeout_ns,
                       FutexScope scope = FutexScope::process) noexcept {
  timespec ts{}, *tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  const int op = scope == FutexScope::shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, expected, tsp, nullptr, 0);
}

// Wakes every thread sleeping on word.
inline void futex_wake_all(std::atomic<uint32_t> *word,
                           FutexScope scope = FutexScope::process) noexcept {
  const int op = scope == FutexScope::shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, INT_MAX, nullptr, nullptr, 0);
}

// The handshake, for one sleeper per word: it sleeps on the word only after announcing
// that in a flag (sleep_on), and whoever changes the word makes the FUTEX_WAKE syscall only
// when it finds the flag set (wake_if_waiting). Both sides store first and load second, all
// seq_cst, so one of the two sees the other: no wake-up is lost, and none is made for a
// side that is busy.

// Call after changing *word (seq_cst): wakes the sleeper if it announced itself in waiting,
// clearing that.
inline void wake_if_waiting(std::atomic<uint32_t> *word, std::atomic<uint32_t> *waiting,
                            FutexScope scope = FutexScope::process) noexcept {
  if (waiting->load(std::memory_order_seq_cst) != 0 &&
      waiting->exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake_all(word, scope);
}

// Announces the sleep in waiting, re-reads *word and sleeps on it (at most timeout_ns, < 0:
// no limit) only while stay(value) holds. The caller re-checks in every case.
template <class Stay>
void sleep_on(std::atomic<uint32_t> *word, std::atomic<uint32_t> *waiting, int64_t timeout_ns,
              Stay &&stay, FutexScope scope = FutexScope::process) {
  waiting->store(1, std::memory_order_seq_cst);
  const uint32_t seen = word->load(std::memory_order_seq_cst);
  if (stay(seen)) futex_wait(word, seen, timeout_ns, scope);
  waiting->store(0, std::memory_order_relaxed);
}

// One turn of a spin wait: tells the CPU that this thread only polls (pause, yield).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_FUTEX_HPP
