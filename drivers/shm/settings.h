// The driver's view of a psb_config: validated once by check() and open(),
// then kept in the context so the timed path never looks at strings.
#ifndef PSBENCH_SHM_SETTINGS_H
#define PSBENCH_SHM_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbshm {

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
// Ring slots when the history is not set (psb_qos.history == 0).
constexpr uint32_t kDefaultDepth = 16;

// How a waiting reader (wait mode, listener thread) and a reliable writer
// waiting for room are woken up. Option "wakeup".
enum class Wakeup { futex, spin };

struct Settings : psb::sdk::RunSettings {
  uint32_t depth = 0;
  Wakeup wakeup = Wakeup::futex;
  bool use_loan = false;
};

// A context (one per role) holds only the settings: the SDK keeps its endpoints and
// destroys those the caller left open before the context.
struct Context {
  Settings settings;
};

// Validates cfg, recording every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

}  // namespace psbshm

#endif
