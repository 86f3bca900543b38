// iceoryx: Eclipse iceoryx 2.0 ("classic"), zero-copy shared memory through the
// per-host daemon iox-roudi. Context, Writer and Reader are in runtime.h, writer.h and
// reader.h; the C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include "psbench/sdk.hpp"
#include "reader.h"
#include "runtime.h"
#include "settings.h"
#include "writer.h"

namespace psbiox {
namespace {

struct Iceoryx {
  static constexpr const char *name = "iceoryx";
  static constexpr const char *description =
      "Eclipse iceoryx 2.0 (classic): zero-copy shared memory through iox-roudi, "
      "untyped publisher/subscriber";
  static std::string version() { return library_version(); }
  static constexpr const char *transports[] = {"shm", nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
      .history = PSB_KEEP_LAST | PSB_KEEP_ALL,  // keep_all with reliable only (check)
      .transports = transports,
      .option_keys = kOptionKeys,
      .max_payload = kMaxPayload,
      // iceoryx 2.0 lets several publishers offer one service, but its
      // service discovery lists the service once however many offer it, so a
      // subscriber cannot tell when all M are connected: one writer per topic.
      .writers_per_topic = 1,
      .crosses_hosts = 0};  // one host only, for now
  // The configuration only: whether RouDi runs is the environment's, which open() finds
  // out (psbench validates experiments before it starts RouDi).
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbiox::Context;
  using Writer = psbiox::Writer;  // loan()/write_loan() are the publisher's loan/publish
  using Reader = psbiox::Reader;  // no flush(): every write goes out at once
};

}  // namespace
}  // namespace psbiox

PSB_SDK_DRIVER(psbiox::Iceoryx)
