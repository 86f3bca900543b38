// Validation of a psb_config against what the shm driver can honour.
#include "settings.h"

#include <cstdlib>
#include <cstring>

#include <sys/statvfs.h>

#include "psbench/driver_support.h"
#include "segment.h"

namespace psbshm {

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  if (cfg == nullptr) {
    psb_set_error(err, "shm: no configuration given");
    return false;
  }
  if (cfg->run_id == nullptr || *cfg->run_id == '\0') {
    psb_set_error(err, "shm: run_id is empty; it names the shared memory segments");
    return false;
  }
  for (const char *c = cfg->run_id; *c; ++c) {
    const bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                    (*c >= '0' && *c <= '9');
    if (!ok) {
      psb_set_error(err, "shm: run_id '%s' must match [A-Za-z0-9]+", cfg->run_id);
      return false;
    }
  }
  if (cfg->transport != nullptr && std::strcmp(cfg->transport, "shm") != 0) {
    psb_set_error(err, "shm: transport '%s' is not supported; supported: shm",
              cfg->transport);
    return false;
  }
  if (cfg->qos.reliability != PSB_BEST_EFFORT &&
      cfg->qos.reliability != PSB_RELIABLE) {
    psb_set_error(err, "shm: reliability must be best_effort or reliable");
    return false;
  }
  if (cfg->qos.durability != PSB_VOLATILE) {
    psb_set_error(err, "shm: durability transient_local is not supported; "
                   "supported: volatile");
    return false;
  }
  // No history setting: a full ring drops the newest sample (best effort) or makes the
  // writer wait (reliable), while keep_last N means "the newest N" (DDS, iceoryx). The
  // ring's size is the option slots.
  if (cfg->qos.history != 0) {
    psb_set_error(err, "shm: history %s cannot be honoured: the ring keeps what is already in "
                       "it (a full ring drops a new sample under best_effort, and makes the "
                       "writer wait under reliable), where keep_last keeps the newest; leave "
                       "history unset and size the ring with option slots=N (default %u)",
                  cfg->qos.history == PSB_KEEP_ALL ? "keep_all" : "keep_last",
                  unsigned(kDefaultDepth));
    return false;
  }
  uint32_t depth = kDefaultDepth;
  if (cfg->notify != PSB_NOTIFY_LISTENER && cfg->notify != PSB_NOTIFY_WAIT &&
      cfg->notify != PSB_NOTIFY_POLL) {
    psb_set_error(err, "shm: notify must be one of listener, wait, poll");
    return false;
  }
  if (cfg->max_payload == 0 || cfg->max_payload > kMaxPayload) {
    psb_set_error(err,
              "shm: max_payload %llu is not supported; supported: 1 to %llu "
              "bytes (header included)",
              static_cast<unsigned long long>(cfg->max_payload),
              static_cast<unsigned long long>(kMaxPayload));
    return false;
  }
  Wakeup wakeup = Wakeup::futex;
  for (size_t i = 0; i < cfg->option_count; ++i) {
    const psb_option &o = cfg->options[i];
    const char *v = o.value == nullptr ? "(null)" : o.value;
    if (o.key != nullptr && std::strcmp(o.key, "slots") == 0) {
      char *end = nullptr;
      const unsigned long long n = std::strtoull(v, &end, 10);
      if (end == v || *end != '\0' || n == 0 || n > kMaxSlotCount) {
        psb_set_error(err, "shm: option slots='%s' is not valid; use a whole number from 1 to %llu",
                      v, static_cast<unsigned long long>(kMaxSlotCount));
        return false;
      }
      depth = uint32_t(n);
    } else if (o.key == nullptr || std::strcmp(o.key, "wakeup") != 0) {
      psb_set_error(err, "shm: unknown option '%s'; valid options: wakeup, slots",
                    o.key == nullptr ? "(null)" : o.key);
      return false;
    } else if (std::strcmp(v, "futex") == 0) {
      wakeup = Wakeup::futex;
    } else if (std::strcmp(v, "spin") == 0) {
      wakeup = Wakeup::spin;
    } else {
      psb_set_error(err, "shm: option wakeup='%s' is not valid; valid values: futex (default), spin", v);
      return false;
    }
  }
  // A segment must fit in /dev/shm at all (free space is checked when it is
  // created, with posix_fallocate).
  const SegmentParams p{cfg->max_payload, depth, cfg->qos.reliability};
  const uint64_t size = segment_size(p);
  struct statvfs vfs;
  if (size == 0 ||
      (statvfs("/dev/shm", &vfs) == 0 &&
       size > static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize)) {
    psb_set_error(err,
              "shm: one topic needs %llu bytes (slots %u x slot %llu "
              "bytes), more than /dev/shm holds; lower option slots or size",
              static_cast<unsigned long long>(size), depth,
              static_cast<unsigned long long>(slot_stride(cfg->max_payload)));
    return false;
  }
  if (out != nullptr) {
    out->run_id = cfg->run_id;
    out->reliability = cfg->qos.reliability;
    out->notify = cfg->notify;
    out->depth = depth;
    out->max_payload = cfg->max_payload;
    out->wakeup = wakeup;
    out->use_loan = cfg->use_loan != 0;
  }
  return true;
}

} // namespace psbshm
