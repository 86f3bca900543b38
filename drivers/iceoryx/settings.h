// The driver's view of a psb_config: validated once by check() and open(), then kept
// in the context so the timed path never looks at strings.
#ifndef PSBENCH_ICEORYX_SETTINGS_H
#define PSBENCH_ICEORYX_SETTINGS_H

#include <cstdint>
#include <cstring>
#include <string>

#include "iceoryx_posh/iceoryx_posh_types.hpp"
#include "psbench/sdk_refusals.hpp"

namespace psbiox {

// Largest message, header included. RouDi's built-in configuration has a mempool of
// exactly 4 MiB payloads; psbench's generated one is sized for the experiment.
constexpr uint64_t kMaxPayload = 4194304;
// iceoryx 2.0's build limits (iceoryx_posh_deployment.hpp), from the installed headers:
// a subscriber queue holds at most 256 samples, a publisher keeps at most 16 for late
// joiners.
constexpr uint32_t kMaxQueueCapacity = iox::MAX_SUBSCRIBER_QUEUE_CAPACITY;
constexpr uint32_t kMaxHistory = iox::MAX_PUBLISHER_HISTORY;
// None: every option is refused (also caps.option_keys).
inline constexpr const char *kOptionKeys[] = {nullptr};
// A reliable writer waits at most this long for a free chunk in RouDi's mempool.
constexpr int64_t kChunkWaitNs = 10'000'000'000;

struct Settings : psb::sdk::RunSettings {
  bool reliable = false;  // a writer waits for a free chunk in RouDi's mempool
  // reliable without keep_last: a full queue makes the writer wait (BLOCK_PRODUCER +
  // WAIT_FOR_CONSUMER). Otherwise it drops its oldest sample (DISCARD_OLDEST_DATA), so
  // keep_last:N keeps the newest N with either reliability, as in DDS.
  bool writer_waits_for_queue = false;
  uint32_t queue_capacity = 0;  // subscriber queue (the history depth)
  uint32_t history = 0;         // transient_local: publisher history = subscriber request
};

// Validates cfg (not whether RouDi runs), recording every refusal (check() and open(),
// which throws them).
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the iceoryx services of a run", /*alnum=*/true);
  // Another transport than shm, and a reliability, durability, history or notify that is
  // not a psb_* value: refused by the SDK (psb::sdk::refuse_outside_caps).
  const uint32_t rel = cfg.qos.reliability;
  const bool transient = cfg.qos.durability == PSB_TRANSIENT_LOCAL;
  uint32_t queue = kMaxQueueCapacity;  // history not set: iceoryx's default queue capacity
  uint32_t history = transient ? kMaxHistory : 0;
  switch (cfg.qos.history) {  // 0: not set
    case PSB_KEEP_LAST: {
      const uint32_t n = cfg.qos.history_depth;
      if (n == 0 || n > kMaxQueueCapacity) {
        refuse.add("history",
                   "history keep_last:%u is not supported; an iceoryx subscriber queue holds "
                   "1 to %u samples (MAX_SUBSCRIBER_QUEUE_CAPACITY of this iceoryx build)",
                   n, kMaxQueueCapacity);
        break;
      }
      if (transient && n > kMaxHistory)
        refuse.add(
            "history",
            "durability transient_local with history keep_last:%u is not supported; an "
            "iceoryx publisher keeps at most %u samples for late joiners (MAX_PUBLISHER_HISTORY); "
            "use keep_last:N with N <= %u",
            n, kMaxHistory, kMaxHistory);
      queue = n;
      if (transient) history = n;
      break;
    }
    case PSB_KEEP_ALL:
      if (rel != PSB_RELIABLE)
        refuse.add(
            "history",
            "history keep_all needs reliability reliable; a best_effort iceoryx "
            "subscriber queue drops its oldest sample when full (with reliable the writer waits "
            "for room instead, so nothing is dropped)");
      if (transient)
        refuse.add(
            "history",
            "durability transient_local with history keep_all is not supported; an "
            "iceoryx publisher keeps at most %u samples for late joiners; use keep_last:N with "
            "N <= %u",
            kMaxHistory, kMaxHistory);
      break;  // the largest queue, and a writer that waits: nothing is lost
  }
  psb::sdk::payload_in_range(cfg, refuse, 1, kMaxPayload);
  psb::sdk::Options(cfg, refuse).refuse_unknown(kOptionKeys);
  s.reliable = rel == PSB_RELIABLE;
  s.writer_waits_for_queue = rel == PSB_RELIABLE && cfg.qos.history != PSB_KEEP_LAST;
  s.queue_capacity = queue;
  s.history = history;
  return s;
}

}  // namespace psbiox

#endif
