// shm: the baseline with no middleware at all, a POSIX shared-memory single-producer
// single-consumer ring per topic. This file names the driver, its capabilities and the
// configurations it takes; Writer and Reader do the work. The C ABI table comes from
// psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <sys/statvfs.h>
#include <sys/utsname.h>

#include <string>

#include "psbench/sdk.hpp"
#include "reader.h"
#include "segment.h"
#include "settings.h"
#include "writer.h"

namespace psbshm {
namespace {

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
// Ring slots when option slots is not given, and at most.
constexpr uint32_t kDefaultDepth = 16;
constexpr uint32_t kMaxSlotCount = 1u << 20;
constexpr const char *kOptionKeys[] = {"wakeup", "slots", nullptr};

// Validates cfg, recording every refusal (check() and open(), which throws them).
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
  const uint64_t size = size_ok ? segment_size(s) : 0;
  struct statvfs vfs;
  if (size > 0 && statvfs("/dev/shm", &vfs) == 0 &&
      size > static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize)
    refuse.add(options.has("slots") ? "option:slots" : "size",
               "one topic needs %llu bytes (slots %u x slot %llu bytes), more than /dev/shm "
               "holds; lower option slots or size",
               static_cast<unsigned long long>(size), s.depth,
               static_cast<unsigned long long>(slot_stride(cfg.max_payload)));
  return s;
}

struct Shm {
  static constexpr const char *name = "shm";
  static constexpr const char *description =
      "POSIX shared-memory single-producer single-consumer ring per topic, no "
      "middleware: the physical floor";
  static std::string version() {
    utsname u{};
    if (uname(&u) != 0) return "posix-shm (linux)";
    return std::string("posix-shm (linux ") + u.release + ")";
  }
  static constexpr const char *transports[] = {"shm", nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE,
      .history = 0,  // no history setting: the ring size is option slots (check() says why)
      .transports = transports,
      .option_keys = kOptionKeys,
      .max_payload = kMaxPayload,
      .readers_per_topic = 1,  // one ring, one reader
      .writers_per_topic = 1,  // and one writer
      .crosses_hosts = 0};     // one host only, for now
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  // A context (one per role) holds only the settings: the SDK keeps its endpoints and
  // destroys those the caller left open before the context.
  struct Context : Settings {
    explicit Context(const psb_config &cfg)
        : Settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
  };
  using Writer = psbshm::Writer;
  using Reader = psbshm::Reader;
};

}  // namespace
}  // namespace psbshm

PSB_SDK_DRIVER(psbshm::Shm)
