// For a driver's GoogleTest: a take of the driver under test interrupted by a signal, as
// the node stops a run (its handlers have no SA_RESTART).
#pragma once
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "driver_under_test.hpp"
#include "psbench/driver.h"

namespace psb_test {

struct InterruptedTake {
  int result;                                // what take returned: 0 is "no sample"
  std::chrono::steady_clock::duration took;  // far less than the wait it was given
};

// take(reader, timeout_ns) on a thread of its own, sent SIGUSR1 every 100 ms until it
// returns (a signal that lands between two of the middleware's waits interrupts nothing).
inline InterruptedTake interrupted_take(psb_reader *reader, int64_t timeout_ns) {
  struct sigaction sa {};
  sa.sa_handler = [](int) {};
  struct sigaction old {};
  sigaction(SIGUSR1, &sa, &old);
  std::atomic<bool> done{false};
  int result = 99;
  const auto start = std::chrono::steady_clock::now();
  std::thread taker([&] {
    const void *data;
    size_t len;
    psb_error err{};
    result = driver_under_test().take(reader, timeout_ns, &data, &len, &err);
    done = true;
  });
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done) pthread_kill(taker.native_handle(), SIGUSR1);
  }
  taker.join();
  sigaction(SIGUSR1, &old, nullptr);
  return {result, std::chrono::steady_clock::now() - start};
}

}  // namespace psb_test
