// Validation of a psb_config against what the shm driver can honour.
#include "settings.h"

#include <sys/statvfs.h>

#include "segment.h"

namespace psbshm {

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the shared memory segments", /*alnum=*/true);
  // Another transport, durability transient_local, and a reliability or notify that is not
  // a psb_* value: refused by the SDK (psb::sdk::refuse_outside_caps), in the same words.
  // No history setting: a full ring drops the newest sample (best effort) or makes the
  // writer wait (reliable), while keep_last N means "the newest N" (DDS, iceoryx). The
  // ring's size is the option slots.
  if (cfg.qos.history != 0)
    refuse.add("history",
               "history %s cannot be honoured: the ring keeps what is already in it (a full "
               "ring drops a new sample under best_effort, and makes the writer wait under "
               "reliable), where keep_last keeps the newest; leave history unset and size the "
               "ring with option slots=N (default %u)",
               cfg.qos.history == PSB_KEEP_ALL ? "keep_all" : "keep_last", unsigned(kDefaultDepth));
  const bool size_ok = psb::sdk::payload_in_range(cfg, refuse, 1, kMaxPayload);
  const psb::sdk::Options options(cfg, refuse);
  // The node refuses any other key itself; a caller of the ABI is told as well.
  options.refuse_unknown(kOptionKeys);
  s.depth = uint32_t(options.number("slots", kDefaultDepth, 1, kMaxSlotCount));
  s.wakeup = Wakeup(options.choice("wakeup", {"futex", "spin"}));
  s.use_loan = cfg.use_loan != 0;
  // A segment must fit in /dev/shm at all (free space is checked when it is
  // created, with posix_fallocate).
  const uint64_t size = size_ok ? segment_size({cfg.max_payload, s.depth, cfg.qos.reliability}) : 0;
  struct statvfs vfs;
  if (size_ok && (size == 0 || (statvfs("/dev/shm", &vfs) == 0 &&
                                size > static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize)))
    refuse.add(options.has("slots") ? "option:slots" : "size",
               "one topic needs %llu bytes (slots %u x slot %llu bytes), more than /dev/shm "
               "holds; lower option slots or size",
               static_cast<unsigned long long>(size), s.depth,
               static_cast<unsigned long long>(slot_stride(cfg.max_payload)));
  return s;
}

}  // namespace psbshm
