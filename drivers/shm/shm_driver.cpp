// shm: the baseline with no middleware at all, a POSIX shared-memory single-producer
// single-consumer ring per topic. This file names the driver and its capabilities;
// Writer and Reader do the work. The C ABI table comes from psbench/sdk.hpp
// (PSB_SDK_DRIVER at the end).
#include <sys/utsname.h>

#include <string>

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
  static std::string version() {
    utsname u{};
    if (uname(&u) != 0) return "posix-shm (linux)";
    return std::string("posix-shm (linux ") + u.release + ")";
  }
  static constexpr const char *transports[] = {"shm", nullptr};
  static constexpr psb_capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE,
      .history = 0,  // no history setting: the ring size is option slots (check() says why)
      .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
      .transports = transports,
      .option_keys = kOptionKeys,
      .max_payload = kMaxPayload,
      .readers_per_topic = 1,  // one ring, one reader
      .writers_per_topic = 1,  // and one writer
      .crosses_hosts = 0};     // one host only, for now
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbshm::Context;
  using Writer = psbshm::Writer;
  using Reader = psbshm::Reader;
};

}  // namespace
}  // namespace psbshm

PSB_SDK_DRIVER(psbshm::Shm)
