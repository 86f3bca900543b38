// The driver's view of a psb_config: validated once by check() and open(), then kept
// in the context so the timed path never looks at strings.
#ifndef PSBENCH_ICEORYX_SETTINGS_H
#define PSBENCH_ICEORYX_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbiox {

// Largest message, header included. RouDi's built-in configuration has a mempool of
// exactly 4 MiB payloads; psbench's generated one is sized for the experiment.
constexpr uint64_t kMaxPayload = 4194304;
// iceoryx 2.0's build limits (iceoryx_posh_deployment.hpp), checked against the
// headers in settings.cpp: a subscriber queue holds at most 256 samples, a publisher
// keeps at most 16 for late joiners.
constexpr uint32_t kMaxQueueCapacity = 256;
constexpr uint32_t kMaxHistory = 16;
// A reliable writer waits at most this long for a free chunk in RouDi's mempool.
constexpr int64_t kChunkWaitNs = 10'000'000'000;

struct Settings {
  std::string run_id;
  bool reliable = false;        // a writer waits for a free chunk in RouDi's mempool
  // reliable without keep_last: a full queue makes the writer wait (BLOCK_PRODUCER +
  // WAIT_FOR_CONSUMER). Otherwise it drops its oldest sample (DISCARD_OLDEST_DATA), so
  // keep_last:N keeps the newest N with either reliability, as in DDS.
  bool writer_waits_for_queue = false;
  uint32_t notify = PSB_NOTIFY_WAIT;
  uint32_t queue_capacity = 0;  // subscriber queue (the history depth)
  uint32_t history = 0;         // transient_local: publisher history = subscriber request
  uint64_t max_payload = 0;
  bool use_loan = false;
};

// Validates cfg (not whether RouDi runs), recording every refusal (check() and open(),
// which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

}  // namespace psbiox

#endif
