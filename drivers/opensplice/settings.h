// The driver's view of a psb_config (validated by check() and again by open()), and the
// OpenSplice configuration (the XML OSPL_URI names) each deployment gets from it. Built
// twice: here for OpenSplice 6.9's single-process deployment, and with
// PSBENCH_OSPL_FEDERATED by drivers/opensplice5 for OpenSplice 5.5.1's federated one.
#pragma once

#include <dds_dcps.h>

#include <cstdint>
#include <string>

#include "psbench/sdk.hpp"
#include "psbench/sdk_dds.hpp"

namespace psbospl {

using psb::sdk::fail;

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint32_t kMaxElements = 100000;
constexpr uint32_t kMaxDomainId = 230;  // OpenSplice refuses ids above 230

#ifdef PSBENCH_OSPL_FEDERATED
enum class Transport { shm, config };
// Their names, in the order of Transport; also caps.transports (the first is the default).
// Federated: shm only, through the spliced psbench starts for every run (its manifest).
inline constexpr const char *kTransportNames[] = {"shm", nullptr};
#else
enum class Transport { standalone, config };
inline constexpr const char *kTransportNames[] = {"standalone", "config", nullptr};
#endif

struct Settings : psb::sdk::RunSettings, psb::sdk::SampleType {
  Transport transport{};
  uint32_t domain_id = 0;  // standalone: the domain (and DDSI2's ports)
  int daemon_port = 0;     // shm: option broker=127.0.0.1:PORT, the spliced psbench started
  std::string vendor_uri;  // option ospl_uri, untouched (transport config)
};

#ifdef PSBENCH_OSPL_FEDERATED
// shm: the domain of the spliced psbench started on daemon_port (spliced_config.py names
// it so, psbench_spliced_PORT); the process finds its shared memory through spliced's key
// file and joins it.
inline std::string domain_xml(const Settings &s) {
  return "<OpenSplice><Domain><Name>psbench_spliced_" + std::to_string(s.daemon_port) +
         "</Name></Domain></OpenSplice>";
}

// Option broker (transport shm): psbench starts spliced and passes where it listens.
inline void parse_deployment(const psb::sdk::Options &options, psb::sdk::Refusals &refuse,
                             Settings &s) {
  const bool shm = s.transport == Transport::shm;
  if (!shm) return;
  const char *broker = options.required(
      "broker", "127.0.0.1:PORT",
      "transport shm joins the spliced daemon psbench starts for it (psbench passes this option)");
  psb::sdk::BrokerAddress address;
  if (broker != nullptr && psb::sdk::broker_address(broker, 7400, refuse, address))
    s.daemon_port = address.port;
}
#else

// The DDSI2 service as psbench configures it: RTPS on loopback only (across hosts, on the
// interface that has the run's local address), unicast: discovery goes to the ports of
// participant indices 0 to 99 at each peer, this host's own address included (processes
// of the run on this host), then every --peer; an 8 MiB socket receive buffer for 4 MiB
// samples.
inline std::string ddsi2_xml(const Settings &s) {
  std::string peers = "<Peer Address=\"" + s.address() + "\"/>";
  for (const std::string &peer : s.peer_addresses) peers += "<Peer Address=\"" + peer + "\"/>";
  return "<DDSI2Service name=\"ddsi2\"><General><NetworkInterfaceAddress>" + s.address() +
         "</NetworkInterfaceAddress><AllowMulticast>false</AllowMulticast>"
         "<EnableMulticastLoopback>false</EnableMulticastLoopback></General>"
         "<Discovery><ParticipantIndex>auto</ParticipantIndex>"
         "<MaxAutoParticipantIndex>99</MaxAutoParticipantIndex><Peers>" +
         peers +
         "</Peers></Discovery>"
         "<Internal><MinimumSocketReceiveBufferSize>8MiB</MinimumSocketReceiveBufferSize>"
         "</Internal>"
         "<Compatibility><StandardsConformance>lax</StandardsConformance></Compatibility>"
         "</DDSI2Service>";
}

// The OpenSplice configuration of transport standalone: OpenSplice's "single process"
// deployment (the domain on the process's heap, its DDSI2 service a thread of it). Only
// warnings and errors are reported (on stderr: context.h).
inline std::string domain_xml(const Settings &s) {
  return "<OpenSplice><Domain><Name>psbench_standalone</Name><Id>" + std::to_string(s.domain_id) +
         "</Id><SingleProcess>true</SingleProcess><Report verbosity=\"WARNING\"/>"
         "<Service name=\"ddsi2\"><Command>ddsi2</Command></Service></Domain>" +
         ddsi2_xml(s) + "</OpenSplice>";
}

// Option domain_id; transport shm refused, with why; the QoS DDSI2 6.9 cannot honour.
inline void parse_deployment(const psb::sdk::Options &options, psb::sdk::Refusals &refuse,
                             Settings &s) {
  s.domain_id = psb::sdk::dds::domain_id(options, s.run_id, kMaxDomainId);
  psb::sdk::dds::transient_local_needs_reliable(
      s.qos, refuse,
      "OpenSplice's DDSI2 hands a late joiner in another process its history through the "
      "reliable protocol only");
  if (s.qos.durability == PSB_TRANSIENT_LOCAL && s.qos.history == PSB_KEEP_ALL)
    refuse.add("history",
               "durability transient_local with history keep_all stalls in OpenSplice 6.9's DDSI2 "
               "(a keep_all transient-local writer never counts acknowledged data as "
               "acknowledged, so DDSI2 throttles it for good after a few hundred samples: "
               "README, \"QoS\"); use --history keep_last:N");
}
#endif

// Validates cfg, recording every refusal (check() and open(), which throws them).
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the topics and the domain");
  psb::sdk::payload_in_range(cfg, refuse, 32, kMaxPayload);
  const psb::sdk::Options options(cfg, refuse);
  s.read(cfg, refuse, kMaxElements);
  s.transport = Transport(psb::sdk::transport_index(cfg, kTransportNames));
  psb::sdk::dds::vendor_config(options, "ospl_uri", s.transport == Transport::config);
  if (s.transport == Transport::config) {
    const char *uri = options.required(
        "ospl_uri", "URI", "transport config takes what OSPL_URI would hold: file://PATH");
    if (uri != nullptr) s.vendor_uri = uri;
  }
#ifndef PSBENCH_OSPL_FEDERATED
  if (cfg.transport != nullptr && std::string_view(cfg.transport) == "shm")
    refuse.add("transport",
               "transport shm, OpenSplice's federated deployment (the shared-memory daemon "
               "spliced), is not in OpenSplice Community Edition 6.9: its shared-memory database "
               "allocator is not in the public source, so no process can attach to spliced's "
               "domain (README, \"Why no shm\"; driver opensplice5 has it, with OpenSplice 5.5.1)");
#endif
  parse_deployment(options, refuse, s);
  return s;
}

}  // namespace psbospl
