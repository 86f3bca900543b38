// The driver's view of a psb_config: validated once by check() and open()
// (shm_driver.cpp), then kept in the context so the timed path never looks at strings.
#ifndef PSBENCH_SHM_SETTINGS_H
#define PSBENCH_SHM_SETTINGS_H

#include <cstdint>

#include "psbench/sdk_refusals.hpp"

namespace psbshm {

// How a waiting reader (wait mode, listener thread) and a reliable writer
// waiting for room are woken up. Option "wakeup".
enum class Wakeup { futex, spin };

struct Settings : psb::sdk::RunSettings {
  uint32_t depth = 0;  // the ring's slots, option slots
  Wakeup wakeup = Wakeup::futex;
  bool use_loan = false;
};

}  // namespace psbshm

#endif
