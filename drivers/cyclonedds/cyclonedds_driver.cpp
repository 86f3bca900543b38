// The psbench driver for Eclipse Cyclone DDS (C API): its name, version, capabilities and
// context. The C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "psbench/sdk.hpp"

#include "context.h"
#include "domains.h"
#include "qos.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbcyc {
namespace {

// The version the headers were built against (from the CMake package), and the file
// name of the libddsc actually loaded, which carries the library's full version
// (Cyclone 0.10 has no call that reports its version).
const char *cyc_version() {
  static const char *const text = [] {
    static char buf[PATH_MAX + 64];
    char resolved[PATH_MAX] = "";
    Dl_info info{};
    const char *lib = "libddsc";
    if (dladdr(reinterpret_cast<void *>(&dds_write), &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, resolved) != nullptr) {
      const char *slash = std::strrchr(resolved, '/');
      lib = slash ? slash + 1 : resolved;
    }
    std::snprintf(buf, sizeof buf, "%s (%s)", PSBENCH_CYCLONEDDS_VERSION, lib);
    return buf;
  }();
  return text;
}

}  // namespace

struct Cyclone {
  static constexpr const char *name = "cyclonedds";
  static constexpr const char *description =
      "Eclipse Cyclone DDS (C API): types from idl/psbench.idl by idlc; UDP on loopback "
      "by default, multicast, iceoryx shared memory, or a vendor configuration";
  static const char *version() { return cyc_version(); }
  static psb_capabilities capabilities();
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbcyc::Context;
  using Writer = psbcyc::Writer;
  using Reader = psbcyc::Reader;
};

psb_capabilities Cyclone::capabilities() {
  static const char *const transports[] = {"udp", "multicast", "shm", "config", nullptr};
  static const char *const option_keys[] = {"type", "elements", "domain_id", "cyclonedds_uri", "write_batch", nullptr};
  return {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
          .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
          .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
          .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
          .transports = transports,
          .option_keys = option_keys,
          .max_payload = kMaxPayload,
          .readers_per_topic = 0,  // no limit
          .writers_per_topic = 0};  // no limit
}

Context::Context(const psb_config &cfg) : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {
  cyc_version();  // worked out now, never on the timed path
  descriptor = settings.type == DataType::complex ? &psbench_Complex_desc : &psbench_Bytes_desc;
  participant = join_domain(settings.domain_id, domain_config(settings));
  qos = endpoint_qos(settings);
}

Context::~Context() {
  leave_domain(settings.domain_id, participant);
  dds_delete_qos(qos);
}

}  // namespace psbcyc

PSB_SDK_DRIVER(psbcyc::Cyclone)
