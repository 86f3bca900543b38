// The psbench driver for eProsima Fast DDS (C++ DDS API): its name, version and
// capabilities. The C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <fastcdr/config.h>
#include <fastrtps/config.h>

#include <fastdds/dds/domain/DomainParticipantFactory.hpp>

#include "context.h"
#include "psbench/sdk.hpp"
#include "reader.h"
#include "settings.h"
#include "transports.h"
#include "writer.h"

namespace psbfastdds {
namespace {

struct FastDds {
  static constexpr const char *name = "fastdds";
  static constexpr const char *description =
      "eProsima Fast DDS, DDS C++ API, types from idl/psbench.idl by fastddsgen; "
      "builtin = shared memory + UDPv4 on 127.0.0.1 (Fast DDS's default on one "
      "host, which sends each sample over both); across hosts UDP is on the interface of "
      "--address";
  // Fast DDS 2.9 has no run-time version call: report the version of the headers it
  // was built against, and the file the dynamic linker actually loaded:
  // "<version> (headers; loaded <file>), Fast CDR <version>".
  static std::string version() {
    const void *symbol = reinterpret_cast<const void *>(
        &eprosima::fastdds::dds::DomainParticipantFactory::get_instance);
    return std::string(FASTRTPS_VERSION_STR) + " (headers; loaded " +
           psb::sdk::library_file(symbol, "unknown") + "), Fast CDR " + FASTCDR_VERSION_STR;
  }
  static psb::sdk::Capabilities capabilities();
  // On the interface of --address (transports.cpp); config as the user wrote it.
  static constexpr const char *host_transports[] = {"builtin", "udp", "multicast", "config",
                                                    nullptr};
  // What the machine must allow (transports.h) is judged once the rest holds.
  static void check(const psb_config &cfg, psb::sdk::Refusals &refuse) {
    const Settings s = parse_settings(cfg, refuse);
    if (!refuse.empty()) return;
    try {
      check_transport_setup(s);
    } catch (const psb::sdk::Error &e) {
      refuse.add("transport", "%s", e.what());
    }
  }

  using Context = psbfastdds::Context;
  using Writer = psbfastdds::Writer;  // no flush(): every write goes out at once
  using Reader = psbfastdds::Reader;
};

psb::sdk::Capabilities FastDds::capabilities() {
  return {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
          .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
          .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
          .transports = kTransports,
          .option_keys = kOptionKeys,
          .max_payload = kMaxPayload,
          .crosses_hosts = 1};  // on host_transports
}

}  // namespace
}  // namespace psbfastdds

PSB_SDK_DRIVER(psbfastdds::FastDds)
