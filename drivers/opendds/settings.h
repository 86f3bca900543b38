// The driver's view of a psb_config: validated by check() and again by open(), then kept
// in the context so that the timed path never looks at strings.
#pragma once

#include <cstdint>
#include <string>

#include "psbench/sdk.hpp"

namespace psbodds {

using psb::sdk::fail;
using psb::sdk::kHeaderSize;

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint32_t kMaxElements = 32768;   // complex: ~3.9 MB serialized
// RTPS's port formula (7400 + 250 x domain + offsets) ends at 65535 with domain 232; the
// others stop at 230 too.
constexpr uint32_t kMaxDomainId = 230;
constexpr int kInfoRepoPort = 12345;  // the port OpenDDS's own examples give DCPSInfoRepo

// rtps: RTPS discovery and the rtps_udp transport (peer to peer, OpenDDS's interoperable
// mode); inforepo: discovery through a DCPSInfoRepo (psbench starts one: option broker)
// and the tcp transport; config: what an OpenDDS .ini file says (option opendds_config).
enum class Transport { rtps, inforepo, config };
inline constexpr const char *kTransportNames[] = {"rtps", "inforepo", "config", nullptr};

struct Settings : psb::sdk::RunSettings, psb::sdk::SampleType {
  Transport transport = Transport::rtps;
  uint32_t domain_id = 0;
  psb::sdk::BrokerAddress repo;  // inforepo: DCPSInfoRepo's address (option broker)
  std::string config_file;       // config: option opendds_config, untouched
};

// Validates cfg, recording every refusal (check() and open(), which throws them). The
// default domain id of a run is 1 + FNV-1a(run_id) % 200, as the other DDS drivers'.
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the topics and the domain");
  psb::sdk::payload_in_range(cfg, refuse, kHeaderSize, kMaxPayload);
  const psb::sdk::Options options(cfg, refuse);
  s.read(cfg, refuse, kMaxElements);
  s.transport = Transport(psb::sdk::transport_index(cfg, kTransportNames));
  s.domain_id = uint32_t(
      options.number("domain_id", psb::sdk::id_in_range(s.run_id, 1, 200), 0, kMaxDomainId));

  const bool inforepo = s.transport == Transport::inforepo;
  options.given_but("broker", !inforepo,
                    "applies to transport inforepo only (the DCPSInfoRepo's address)");
  if (inforepo) {
    if (const char *b = options.required("broker", "HOST:PORT",
                                         "psbench starts a DCPSInfoRepo for transport inforepo "
                                         "and gives its address; or name your own"))
      psb::sdk::broker_address(b, kInfoRepoPort, refuse, s.repo);
  }
  const bool config = s.transport == Transport::config;
  options.given_but("opendds_config", !config,
                    "is a vendor configuration; it needs --transport config (psbench then "
                    "records transport 'config' instead of claiming one it did not choose)");
  if (config) {
    if (const char *file = options.required("opendds_config", "PATH",
                                            "give an OpenDDS configuration file (.ini)")) {
      if (*file == '\0')
        refuse.add("option:opendds_config", "option opendds_config is empty; give a .ini file");
      s.config_file = file;
    }
  }

  // transient_local with best_effort is honoured: OpenDDS hands a late joiner the writer's
  // history when they associate, also over best effort (checked: README "QoS").
  const psb_qos &q = s.qos;
  if (q.history == PSB_KEEP_LAST && q.history_depth > INT32_MAX)
    refuse.add("history", "history keep_last:%u is not valid; keep_last:N needs 1 <= N <= %d",
               q.history_depth, INT32_MAX);
  return s;
}

}  // namespace psbodds
