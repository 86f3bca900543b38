// The driver's view of a psb_config: validated once by check() and open(),
// then kept in the context so the timed path never looks at strings.
#ifndef PSBENCH_SHM_SETTINGS_H
#define PSBENCH_SHM_SETTINGS_H

#include <cstdint>

#include "psbench/sdk_refusals.hpp"

namespace psbshm {

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
// Ring slots when option slots is not given, and at most.
constexpr uint32_t kDefaultDepth = 16;
constexpr uint32_t kMaxSlotCount = 1u << 20;
inline constexpr const char *kOptionKeys[] = {"wakeup", "slots", nullptr};

// How a waiting reader (wait mode, listener thread) and a reliable writer
// waiting for room are woken up. Option "wakeup".
enum class Wakeup { futex, spin };

struct Settings : psb::sdk::RunSettings {
  uint32_t depth = kDefaultDepth;
  Wakeup wakeup = Wakeup::futex;
  bool use_loan = false;
};

// Validates cfg, recording every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

// A context (one per role) holds only the settings: the SDK keeps its endpoints and
// destroys those the caller left open before the context.
struct Context : Settings {
  explicit Context(const psb_config &cfg)
      : Settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
};

}  // namespace psbshm

#endif
