// The driver's view of a psb_config: validated once by check() and open(),
// then kept in the context so that the timed path never looks at strings.
#ifndef PSBENCH_FASTDDS_SETTINGS_H
#define PSBENCH_FASTDDS_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"
#include "security.h"

namespace psbfastdds {

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint64_t kHeaderSize = 32;       // the node's message header
constexpr uint32_t kDefaultElements = 16;  // complex: Outer elements per sample
constexpr uint32_t kInnersPerOuter = 4;
constexpr uint32_t kMaxDomainId = 232;  // Fast DDS's UDP port formula ends here

enum class DataType { bytes, complex };
enum class Transport { builtin, udp, multicast, shm, config };

struct Settings : psb::sdk::RunSettings {
  Transport transport = Transport::builtin;
  DataType type = DataType::bytes;
  uint32_t elements = kDefaultElements;
  uint32_t domain_id = 0;
  std::string profiles_file;        // vendor XML, transport config only
  std::string participant_profile;  // a profile in profiles_file, or empty
  SecuritySettings security;        // options security and security_dir (security.h)
};

// Validates cfg, recording every refusal (check() and open(), which throws them). The
// default domain id of a run is 1 + FNV-1a(run_id) % 200 (psb::sdk::id_in_range).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

const char *transport_name(Transport t);

}  // namespace psbfastdds

#endif
