// Validation of a psb_config against what iceoryx 2.0 can honour.
#include "settings.h"

#include <cstring>

#include "iceoryx_posh/iceoryx_posh_types.hpp"

#include "psbench/sdk.hpp"

namespace psbiox {

static_assert(kMaxQueueCapacity == iox::MAX_SUBSCRIBER_QUEUE_CAPACITY,
              "the installed iceoryx has another subscriber queue limit");
static_assert(kMaxHistory == iox::MAX_PUBLISHER_HISTORY,
              "the installed iceoryx has another publisher history limit");

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  if (cfg.run_id == nullptr || *cfg.run_id == '\0') {
    refuse.add("driver", "run_id is empty; it names the iceoryx services of a run");
  } else {
    for (const char *c = cfg.run_id; *c; ++c) {
      const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
      if (!ok) {
        refuse.add("driver", "run_id '%s' must match [A-Za-z0-9]+", cfg.run_id);
        break;
      }
    }
    s.run_id = cfg.run_id;
  }
  if (cfg.transport != nullptr && std::strcmp(cfg.transport, "shm") != 0)
    refuse.add("transport", "transport '%s' is not supported; supported: shm (iceoryx shared memory through iox-roudi)",
               cfg.transport);
  const uint32_t rel = cfg.qos.reliability;
  if (rel != PSB_BEST_EFFORT && rel != PSB_RELIABLE)
    refuse.add("reliability", "reliability must be best_effort or reliable");
  const uint32_t dur = cfg.qos.durability;
  if (dur != PSB_VOLATILE && dur != PSB_TRANSIENT_LOCAL)
    refuse.add("durability", "durability must be volatile or transient_local");
  const bool transient = dur == PSB_TRANSIENT_LOCAL;
  uint32_t queue = kMaxQueueCapacity;  // history not set: iceoryx's default queue capacity
  uint32_t history = transient ? kMaxHistory : 0;
  switch (cfg.qos.history) {
    case 0:
      break;
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
        refuse.add("history",
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
        refuse.add("history",
                   "history keep_all needs reliability reliable; a best_effort iceoryx "
                   "subscriber queue drops its oldest sample when full (with reliable the writer waits "
                   "for room instead, so nothing is dropped)");
      if (transient)
        refuse.add("history",
                   "durability transient_local with history keep_all is not supported; an "
                   "iceoryx publisher keeps at most %u samples for late joiners; use keep_last:N with "
                   "N <= %u",
                   kMaxHistory, kMaxHistory);
      break;  // the largest queue, and a writer that waits: nothing is lost
    default:
      refuse.add("history", "history must be keep_last:N or keep_all");
  }
  if (cfg.notify != PSB_NOTIFY_LISTENER && cfg.notify != PSB_NOTIFY_WAIT && cfg.notify != PSB_NOTIFY_POLL)
    refuse.add("notify", "notify must be one of listener, wait, poll");
  if (cfg.max_payload == 0 || cfg.max_payload > kMaxPayload)
    refuse.add("size", "max_payload %llu is not supported; supported: 1 to %llu bytes (header included)",
               static_cast<unsigned long long>(cfg.max_payload), static_cast<unsigned long long>(kMaxPayload));
  for (size_t i = 0; i < cfg.option_count; ++i) {
    const char *key = cfg.options[i].key ? cfg.options[i].key : "(null)";
    refuse.add(std::string("option:") + key, "unknown option '%s'; this driver takes no options", key);
  }
  s.reliable = rel == PSB_RELIABLE;
  s.writer_waits_for_queue = rel == PSB_RELIABLE && cfg.qos.history != PSB_KEEP_LAST;
  s.notify = cfg.notify;
  s.queue_capacity = queue;
  s.history = history;
  s.max_payload = cfg.max_payload;
  s.use_loan = cfg.use_loan != 0;
  return s;
}

}  // namespace psbiox
