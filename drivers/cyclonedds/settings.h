// The driver's view of a psb_config: validated by check() and again by open(), then
// kept in the context so that the timed path never looks at strings.
#pragma once

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbcyc {

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint32_t kDefaultElements = 16;  // type=complex without elements=N
constexpr uint32_t kMaxElements = 100000;
constexpr uint32_t kMaxDomainId = 230;  // Cyclone's default port mapping ends at 232

enum class Transport { udp, multicast, shm, config };
enum class DataType { bytes, complex };

struct Settings {
  std::string run_id;
  Transport transport = Transport::udp;
  DataType type = DataType::bytes;
  uint32_t elements = kDefaultElements;  // complex only
  uint32_t domain_id = 0;
  std::string vendor_config;  // option cyclonedds_uri, untouched (transport config)
  bool write_batch = false;   // option write_batch: Cyclone's WriteBatch
  uint32_t notify = PSB_NOTIFY_WAIT;
  psb_qos qos{};
  uint64_t max_payload = 0;
};

// The default domain id of a run: 1 + FNV-1a(run_id) % 200 (psb::sdk::id_in_range).
uint32_t default_domain_id(const char *run_id);

// Validates cfg, recording every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

const char *transport_name(Transport t);

}  // namespace psbcyc
