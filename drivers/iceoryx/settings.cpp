// Validation of a psb_config against what iceoryx 2.0 can honour.
#include "settings.h"

#include <cstring>

#include "iceoryx_posh/iceoryx_posh_types.hpp"

#include "psbench/driver_support.h"

namespace psbiox {

static_assert(kMaxQueueCapacity == iox::MAX_SUBSCRIBER_QUEUE_CAPACITY,
              "the installed iceoryx has another subscriber queue limit");
static_assert(kMaxHistory == iox::MAX_PUBLISHER_HISTORY,
              "the installed iceoryx has another publisher history limit");

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  if (cfg == nullptr) {
    psb_set_error(err, "iceoryx: no configuration given");
    return false;
  }
  if (cfg->run_id == nullptr || *cfg->run_id == '\0') {
    psb_set_error(err, "iceoryx: run_id is empty; it names the iceoryx services of a run");
    return false;
  }
  for (const char *c = cfg->run_id; *c; ++c) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
    if (!ok) {
      psb_set_error(err, "iceoryx: run_id '%s' must match [A-Za-z0-9]+", cfg->run_id);
      return false;
    }
  }
  if (cfg->transport != nullptr && std::strcmp(cfg->transport, "shm") != 0) {
    psb_set_error(err, "iceoryx: transport '%s' is not supported; supported: shm (iceoryx shared memory through iox-roudi)",
              cfg->transport);
    return false;
  }
  const uint32_t rel = cfg->qos.reliability;
  if (rel != PSB_BEST_EFFORT && rel != PSB_RELIABLE) {
    psb_set_error(err, "iceoryx: reliability must be best_effort or reliable");
    return false;
  }
  const uint32_t dur = cfg->qos.durability;
  if (dur != PSB_VOLATILE && dur != PSB_TRANSIENT_LOCAL) {
    psb_set_error(err, "iceoryx: durability must be volatile or transient_local");
    return false;
  }
  const bool transient = dur == PSB_TRANSIENT_LOCAL;
  uint32_t queue = kMaxQueueCapacity;  // history not set: iceoryx's default queue capacity
  uint32_t history = transient ? kMaxHistory : 0;
  switch (cfg->qos.history) {
    case 0:
      break;
    case PSB_KEEP_LAST: {
      const uint32_t n = cfg->qos.history_depth;
      if (n == 0 || n > kMaxQueueCapacity) {
        psb_set_error(err,
                  "iceoryx: history keep_last:%u is not supported; an iceoryx subscriber queue holds "
                  "1 to %u samples (MAX_SUBSCRIBER_QUEUE_CAPACITY of this iceoryx build)",
                  n, kMaxQueueCapacity);
        return false;
      }
      if (transient && n > kMaxHistory) {
        psb_set_error(err,
                  "iceoryx: durability transient_local with history keep_last:%u is not supported; an "
                  "iceoryx publisher keeps at most %u samples for late joiners (MAX_PUBLISHER_HISTORY); "
                  "use keep_last:N with N <= %u",
                  n, kMaxHistory, kMaxHistory);
        return false;
      }
      queue = n;
      if (transient) history = n;
      break;
    }
    case PSB_KEEP_ALL:
      if (rel != PSB_RELIABLE) {
        psb_set_error(err,
                  "iceoryx: history keep_all needs reliability reliable; a best_effort iceoryx "
                  "subscriber queue drops its oldest sample when full (with reliable the writer waits "
                  "for room instead, so nothing is dropped)");
        return false;
      }
      if (transient) {
        psb_set_error(err,
                  "iceoryx: durability transient_local with history keep_all is not supported; an "
                  "iceoryx publisher keeps at most %u samples for late joiners; use keep_last:N with "
                  "N <= %u",
                  kMaxHistory, kMaxHistory);
        return false;
      }
      break;  // the largest queue, and a writer that waits: nothing is lost
    default:
      psb_set_error(err, "iceoryx: history must be keep_last:N or keep_all");
      return false;
  }
  if (cfg->notify != PSB_NOTIFY_LISTENER && cfg->notify != PSB_NOTIFY_WAIT && cfg->notify != PSB_NOTIFY_POLL) {
    psb_set_error(err, "iceoryx: notify must be one of listener, wait, poll");
    return false;
  }
  if (cfg->max_payload == 0 || cfg->max_payload > kMaxPayload) {
    psb_set_error(err, "iceoryx: max_payload %llu is not supported; supported: 1 to %llu bytes (header included)",
              static_cast<unsigned long long>(cfg->max_payload), static_cast<unsigned long long>(kMaxPayload));
    return false;
  }
  if (cfg->option_count != 0) {
    const char *key = cfg->options[0].key;
    psb_set_error(err, "iceoryx: unknown option '%s'; this driver takes no options", key ? key : "(null)");
    return false;
  }
  if (out != nullptr) {
    out->run_id = cfg->run_id;
    out->reliable = rel == PSB_RELIABLE;
    out->writer_waits_for_queue = rel == PSB_RELIABLE && cfg->qos.history != PSB_KEEP_LAST;
    out->notify = cfg->notify;
    out->queue_capacity = queue;
    out->history = history;
    out->max_payload = cfg->max_payload;
    out->use_loan = cfg->use_loan != 0;
  }
  return true;
}

}  // namespace psbiox
