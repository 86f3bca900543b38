// The psbench driver for Eclipse Cyclone DDS (C API): its name, version and capabilities;
// Context, Writer and Reader are in context.h, writer.h and reader.h. The C ABI table
// comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include "psbench/sdk.hpp"
#include "reader.h"
#include "writer.h"

namespace psbcyc {

struct Cyclone {
  static constexpr const char *name = "cyclonedds";
  static constexpr const char *description =
      "Eclipse Cyclone DDS (C API): types from idl/psbench.idl by idlc; UDP on loopback "
      "by default (across hosts: on the interface of --address), multicast, iceoryx shared "
      "memory, or a vendor configuration";
  // The version the headers were built against (from the CMake package), and the file
  // name of the libddsc actually loaded, which carries the library's full version
  // (Cyclone 0.10 has no call that reports its version).
  static std::string version() {
    return std::string(PSBENCH_CYCLONEDDS_VERSION) + " (" +
           psb::sdk::library_file(reinterpret_cast<const void *>(&dds_write), "libddsc") + ")";
  }
  static constexpr const char *option_keys[] = {"type",           "elements",    "domain_id",
                                                "cyclonedds_uri", "write_batch", "security",
                                                "security_dir",   nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
      .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
      .transports = kTransportNames,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .crosses_hosts = 1};  // on host_transports
  // On the interface of --address (context.h, across_hosts); config as the user wrote it.
  static constexpr const char *host_transports[] = {"udp", "multicast", "config", nullptr};
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  using Context = psbcyc::Context;
  using Writer = psbcyc::Writer;
  using Reader = psbcyc::Reader;
};

}  // namespace psbcyc

PSB_SDK_DRIVER(psbcyc::Cyclone)
