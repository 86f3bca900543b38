// The psbench driver for Vortex OpenSplice Community Edition (C API, "SAC"), built from
// source (build-sdk): its name, version and capabilities; Context, Writer and Reader are
// in context.h, writer.h and reader.h. The C ABI table comes from psbench/sdk.hpp.
// drivers/opensplice5 builds the same sources with PSBENCH_OSPL_FEDERATED against
// OpenSplice 5.5.1, for its federated (shared-memory daemon) deployment.
#include "psbench/sdk.hpp"
#include "reader.h"
#include "sdk_info.h"  // generated: the SDK psbench built (psbench-sdk.json)
#include "writer.h"

extern "C" {
unsigned psbench_ospl_domains_closed = 0;  // context.h
}

namespace psbospl {

struct OpenSplice {
#ifdef PSBENCH_OSPL_FEDERATED  // drivers/opensplice5: OpenSplice 5.5.1, federated
  static constexpr const char *name = "opensplice5";
  static constexpr const char *description =
      "OpenSplice Community Edition 5.5.1 (C API), built from source: types from "
      "idl/psbench.idl by idlpp; shm (OpenSplice's federated deployment: every process joins "
      "the shared memory of the per-host daemon spliced, which psbench starts); the SDK "
      "in " PSBENCH_OSPL_HOME;
  static constexpr const char *option_keys[] = {"type", "elements", "broker", nullptr};
  static constexpr bool kCrossesHosts = false;  // no network service is built
#else
  static constexpr const char *name = "opensplice";
  static constexpr const char *description =
      "Vortex OpenSplice Community Edition (C API), built from source: types from "
      "idl/psbench.idl by idlpp; standalone (OpenSplice's single-process deployment: DDSI2 in "
      "the process, RTPS on loopback; across hosts: on the interface of --address) or a vendor "
      "configuration; the SDK in " PSBENCH_OSPL_HOME;
  static constexpr const char *option_keys[] = {"type", "elements", "domain_id", "ospl_uri",
                                                nullptr};
  static constexpr bool kCrossesHosts = true;
  // standalone on the interface of --address (settings.h); config as the user wrote it.
  static constexpr const char *host_transports[] = {"standalone", "config", nullptr};
#endif
  // The release psbench built, the library actually loaded, the commit and the build's
  // flags (psbench-sdk.json; the SDK's folder is in the description).
  static std::string version() {
    return std::string(PSBENCH_OSPL_VERSION) + "OSS (" +  // 6.9.210323OSS, 5.5.1OSS
           psb::sdk::library_file(
               reinterpret_cast<const void *>(&DDS_DomainParticipantFactory_get_instance),
               "libdcpssac.so") +
           "; built from source at " + std::string(PSBENCH_OSPL_COMMIT).substr(0, 12) +
           "; " PSBENCH_OSPL_FLAGS ")";
  }
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
      .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
      .transports = kTransportNames,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .crosses_hosts = kCrossesHosts};
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbospl::Context;
  using Writer = psbospl::Writer;
  using Reader = psbospl::Reader;
};

}  // namespace psbospl

PSB_SDK_DRIVER(psbospl::OpenSplice)
