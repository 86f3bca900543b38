// shm: the baseline with no middleware at all, a POSIX shared-memory single-producer
// single-consumer ring per topic. This file names the driver and its capabilities;
// Writer and Reader do the work. The C ABI table comes from psbench/sdk.hpp
// (PSB_SDK_DRIVER at the end).
#include <sys/utsname.h>

#include <cstdio>

#include "psbench/sdk.hpp"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbshm {
namespace {

struct Shm {
  static constexpr const char *name = "shm";
  static constexpr const char *description =
      "POSIX shared-memory single-producer single-consumer ring per topic, no "
      "middleware: the physical floor";
  static const char *version() {
    static const char *const text = [] {
      static char buf[128];
      struct utsname u;
      if (uname(&u) == 0)
        std::snprintf(buf, sizeof buf, "posix-shm (linux %s)", u.release);
      else
        std::snprintf(buf, sizeof buf, "posix-shm (linux)");
      return buf;
    }();
    return text;
  }
  static psb_capabilities capabilities();
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  struct Context : psbshm::Context {
    explicit Context(const psb_config &cfg)
        : psbshm::Context{(version(), psb::sdk::parse_or_throw(cfg, parse_settings))} {
    }  // version: never on the timed path
  };
  // loan()/write_loan(): write straight into the slot. matched(): the ring's one peer.
  // No flush(): every write goes out at once.
  using Writer = psbshm::Writer;
  using Reader = psbshm::Reader;
};

psb_capabilities Shm::capabilities() {
  static const char *const transports[] = {"shm", nullptr};
  static const char *const option_keys[] = {"wakeup", "slots", nullptr};
  return {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
          .durability = PSB_VOLATILE,
          .history = 0,  // no history setting: the ring size is option slots (check() says why)
          .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
          .transports = transports,
          .option_keys = option_keys,
          .max_payload = kMaxPayload,
          .readers_per_topic = 1,  // one ring, one reader
          .writers_per_topic = 1,  // and one writer
          .crosses_hosts = 0};     // one host only, for now
}

}  // namespace
}  // namespace psbshm

PSB_SDK_DRIVER(psbshm::Shm)
