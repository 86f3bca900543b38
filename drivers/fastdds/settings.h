// The driver's view of a psb_config: validated once by check() and open(),
// then kept in the context so that the timed path never looks at strings.
#ifndef PSBENCH_FASTDDS_SETTINGS_H
#define PSBENCH_FASTDDS_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_dds.hpp"
#include "psbench/sdk_refusals.hpp"

namespace psbfastdds {

using psb::sdk::kHeaderSize;               // the node's message header
constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint32_t kDefaultElements = 16;  // complex: Outer elements per sample
constexpr uint32_t kInnersPerOuter = 4;
constexpr uint32_t kMaxDomainId = 232;  // Fast DDS's UDP port formula ends here

enum class DataType { bytes, complex };
// In the order of kTransports, psbench's names for them.
enum class Transport { builtin, udp, multicast, shm, config };
inline constexpr const char *kTransports[] = {"builtin", "udp",    "multicast",
                                              "shm",     "config", nullptr};
inline constexpr const char *kOptionKeys[] = {
    "type",     "elements",     "domain_id", "profiles_file", "participant_profile",
    "security", "security_dir", nullptr};

struct Settings : psb::sdk::RunSettings {
  Transport transport = Transport::builtin;
  DataType type = DataType::bytes;
  uint32_t elements = kDefaultElements;
  uint32_t domain_id = 0;
  std::string profiles_file;        // vendor XML, transport config only
  std::string participant_profile;  // a profile in profiles_file, or empty
  psb::sdk::Security security;      // options security and security_dir: DDS Security
};

// Validates cfg, recording every refusal (check() and open(), which throws them). The
// default domain id of a run is 1 + FNV-1a(run_id) % 200 (psb::sdk::id_in_range).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

inline const char *transport_name(Transport t) { return kTransports[int(t)]; }

}  // namespace psbfastdds

#endif
