// The psbench driver for Vortex OpenSplice Community Edition (C API, "SAC"), built from
// source (build-sdk): its name, version and capabilities; Context, Writer and Reader are
// in context.h, writer.h and reader.h. The C ABI table comes from psbench/sdk.hpp.
#include "psbench/sdk.hpp"
#include "reader.h"
#include "sdk_info.h"  // generated: the SDK psbench built (psbench-sdk.json)
#include "writer.h"

extern "C" {
unsigned psbench_ospl_domains_closed = 0;  // context.h
}

namespace psbospl {

struct OpenSplice {
  static constexpr const char *name = "opensplice";
  static constexpr const char *description =
      "Vortex OpenSplice Community Edition (C API), built from source: types from "
      "idl/psbench.idl by idlpp; standalone (OpenSplice's single-process deployment: DDSI2 in "
      "the process, RTPS on loopback; across hosts: on the interface of --address) or a vendor "
      "configuration; the SDK in " PSBENCH_OSPL_HOME;
  // The release psbench built, the library actually loaded, the commit and the build's
  // flags (psbench-sdk.json; the SDK's folder is in the description).
  static std::string version() {
    return std::string(PSBENCH_OSPL_VERSION) + "OSS (" +
           psb::sdk::library_file(reinterpret_cast<const void *>(&DDS_DataWriter_write),
                                  "libdcpssac.so") +
           "; built from source at " + std::string(PSBENCH_OSPL_COMMIT).substr(0, 12) +
           "; " PSBENCH_OSPL_FLAGS ")";
  }
  static constexpr const char *option_keys[] = {"type", "elements", "domain_id", "ospl_uri",
                                                nullptr};
  static constexpr psb_capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
      .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
      .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
      .transports = kTransportNames,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .readers_per_topic = 0,  // no limit
      .writers_per_topic = 0,  // no limit
      .crosses_hosts = 1};     // on host_transports
  // standalone on the interface of --address (settings.h); config as the user wrote it.
  static constexpr const char *host_transports[] = {"standalone", "config", nullptr};
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbospl::Context;
  using Writer = psbospl::Writer;
  using Reader = psbospl::Reader;
};

}  // namespace psbospl

PSB_SDK_DRIVER(psbospl::OpenSplice)
