// The driver's view of a psb_config: validated by check() and again by open(), then
// kept in the context so that the timed path never looks at strings; what Cyclone's
// iceoryx shared-memory path (transport shm) needs and allows; and error messages,
// formatted only when something has failed.
#pragma once

#include <dds/dds.h>

#include <cstdint>
#include <string>

extern "C" {
#if PSBENCH_CYCLONEDDS_ICEORYX
#include <iceoryx_binding_c/config.h>
#endif
}

#include "psbench/sdk.hpp"
#include "security.h"

namespace psbcyc {

using psb::sdk::fail;

// Throws "<what>: <Cyclone's return code>" (the SDK puts "cyclonedds: " before it).
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_dds(const char *what, dds_return_t rc) {
  fail("%s: %s", what, dds_strretcode(rc));
}

// What a Cyclone call returned (an entity, or DDS_RETCODE_OK), or fail_dds(what) when it
// returned an error code.
inline dds_entity_t checked(dds_entity_t rc, const char *what) {
  if (rc < 0) fail_dds(what, rc);
  return rc;
}

// A Cyclone entity, deleted with its owner (0: none yet; checked() lets no error code in).
using Entity = psb::sdk::Owned<dds_entity_t, &dds_delete>;

constexpr uint64_t kMaxPayload = 4194304;  // 4 MiB, header included
constexpr uint32_t kMaxElements = 100000;
constexpr uint32_t kMaxDomainId = 230;  // Cyclone's default port mapping ends at 232

enum class Transport { udp, multicast, shm, config };
// Their names, in the order of Transport; also caps.transports.
inline constexpr const char *kTransportNames[] = {"udp", "multicast", "shm", "config", nullptr};

struct Settings : psb::sdk::RunSettings, psb::sdk::SampleType {
  Transport transport = Transport::udp;
  uint32_t domain_id = 0;
  std::string vendor_config;    // option cyclonedds_uri, untouched (transport config)
  bool write_batch = false;     // option write_batch: Cyclone's WriteBatch
  psb::sdk::Security security;  // options security and security_dir (security.h)
};

// The largest samples whose serialized form (CDR) fits the largest chunk of the mempools
// iox-roudi sets up without a configuration file (4 MiB of payload), after Cyclone's own
// header in the same chunk. Asking iceoryx for a larger chunk aborts the process, so
// check() refuses such runs. Found by experiment with iceoryx 2.0.3 and Cyclone 0.10.2
// (see README): a bytes message of N bytes takes N + 8 bytes of CDR, a complex sample of
// N elements 40 + 120 N (4 Inner of 16-character strings per Outer), 4194244 at most.
constexpr uint64_t kShmMaxMessage = 4194236;  // bytes, header included
constexpr uint32_t kShmMaxElements = 34951;   // complex

namespace detail {

inline void parse_transport_options(const psb_config &cfg, const psb::sdk::Options &options,
                                    psb::sdk::Refusals &refuse, Settings &s) {
  s.transport = Transport(psb::sdk::transport_index(cfg, kTransportNames));
  const char *uri =
      psb::sdk::dds::vendor_config(options, "cyclonedds_uri", s.transport == Transport::config);
  if (s.transport == Transport::config) {
    if (uri == nullptr || *uri == '\0')
      refuse.add("option:cyclonedds_uri",
                 "transport config needs option cyclonedds_uri=VALUE "
                 "(what CYCLONEDDS_URI would hold: file://PATH or inline XML)");
    else
      s.vendor_config = uri;
  }
  // Strict: write_batch takes true or false only, as it always has.
  s.write_batch = options.flag("write_batch", false, /*strict=*/true);
  if (s.write_batch && s.transport == Transport::config)
    refuse.add(
        "option:write_batch",
        "option write_batch does not apply to transport config (psbench does not "
        "edit your configuration); write <Internal><WriteBatch>true</WriteBatch></Internal> in it");
  s.domain_id = psb::sdk::dds::domain_id(options, s.run_id, kMaxDomainId);
  s.security = parse_security(options, refuse, s.transport == Transport::shm);
}

// Cyclone 0.10.2 puts an endpoint on iceoryx only under conditions it does not report
// as errors (it quietly uses the network instead); refuse what would not go over shm.
inline void check_shm(const psb_config &cfg, psb::sdk::Refusals &refuse, const Settings &s) {
#if !PSBENCH_CYCLONEDDS_ICEORYX
  (void)cfg, (void)s;
  refuse.add(
      "transport",
      "transport shm is Cyclone 0.10's iceoryx shared memory; Cyclone " PSBENCH_CYCLONEDDS_VERSION
      " has none (its PSMX plugins replaced it): use udp or multicast, or cyclonedds "
      "(0.10.2) for shm");
  return;
#else
  if (cfg.qos.history == PSB_KEEP_ALL)
    refuse.add("history",
               "transport shm cannot keep_all: Cyclone 0.10.2 carries only keep_last "
               "endpoints over iceoryx; use --history keep_last:N");
  // The deepest transient_local history an iceoryx publisher keeps (iceoryx's build
  // setting, asked from the library). Cyclone 0.10.2 silently falls back to the network
  // for deeper ones.
  const uint64_t max_history = iox_cfg_max_publisher_history();
  if (cfg.qos.durability == PSB_TRANSIENT_LOCAL && cfg.qos.history == PSB_KEEP_LAST &&
      cfg.qos.history_depth > max_history)
    refuse.add("history",
               "transport shm keeps at most %llu samples for late joiners (iceoryx's "
               "publisher history); use --history keep_last:N with N <= %llu",
               static_cast<unsigned long long>(max_history),
               static_cast<unsigned long long>(max_history));
  if (!s.complex && s.max_payload > kShmMaxMessage)
    refuse.add(
        "size",
        "transport shm carries messages up to %llu bytes (the largest chunk of "
        "iox-roudi's default mempools is 4 MiB, less Cyclone's headers); use a smaller --size",
        static_cast<unsigned long long>(kShmMaxMessage));
  if (s.complex && s.elements > kShmMaxElements)
    refuse.add("option:elements",
               "transport shm carries complex samples up to %u elements (the largest "
               "chunk of iox-roudi's default mempools is 4 MiB); use a smaller elements=N",
               kShmMaxElements);
  if (!psb::sdk::process_running("iox-roudi"))  // without it Cyclone would wait for it
    refuse.add("transport", "transport shm needs iceoryx's RouDi daemon: start iox-roudi first");
#endif
}

}  // namespace detail

// Validates cfg, recording every refusal (check() and open(), which throws them).
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the topics and the domain");
  const bool size_ok = psb::sdk::payload_in_range(cfg, refuse, 32, kMaxPayload);
  const psb::sdk::Options options(cfg, refuse);
  s.read(cfg, refuse, kMaxElements);
  detail::parse_transport_options(cfg, options, refuse, s);
  psb::sdk::dds::transient_local_needs_reliable(
      s.qos, refuse,
      "Cyclone hands a late joiner its history through the reliable protocol only, so a "
      "best-effort reader in another process would get none");
  if (s.transport == Transport::shm && size_ok) detail::check_shm(cfg, refuse, s);
  return s;
}

}  // namespace psbcyc
