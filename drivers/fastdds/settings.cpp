// Validation of a psb_config against what the fastdds driver can honour.
#include "settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "psbench/sdk.hpp"

namespace psbfastdds {
namespace {

constexpr uint32_t kMaxElements = 32768;  // ~3.9 MB serialized, within kMaxPayload
// The governance and permissions psbench writes cover domains 0..230 (the most every
// DDS vendor's access control parser reads; python/psbench/run/security/dds_documents.py).
constexpr uint32_t kMaxSecureDomainId = 230;

// Option key as a whole number in [min, max] into out; anything else refused. Not
// Options::number: the messages name the valid range as "elements=N with 1 <= N <= M", as
// they always have.
void parse_number(const psb::sdk::Options &options, psb::sdk::Refusals &refuse, const char *key,
                  uint32_t min, uint32_t max, uint32_t &out) {
  const char *value = options.find(key);
  if (value == nullptr) return;
  errno = 0;
  char *end = nullptr;
  const unsigned long long n = *value >= '0' && *value <= '9' ? std::strtoull(value, &end, 10) : 0;
  if (end != nullptr && errno == 0 && *end == '\0' && n >= min && n <= max)
    out = static_cast<uint32_t>(n);
  else
    refuse.add(std::string("option:") + key, "option %s='%s' is not valid; %s=N with %u <= N <= %u",
               key, value, key, min, max);
}

void parse_options(const psb_config &cfg, psb::sdk::Refusals &refuse, Settings &s) {
  // The node refuses keys outside caps.option_keys itself; this says so to any caller
  // that goes straight to the ABI.
  const psb::sdk::Options options(cfg, refuse);
  options.refuse_unknown(kOptionKeys);
  s.security = psb::sdk::dds::security_options(options, refuse);
  if (const char *value = options.find("type")) {
    if (std::strcmp(value, "bytes") == 0)
      s.type = DataType::bytes;
    else if (std::strcmp(value, "complex") == 0)
      s.type = DataType::complex;
    else
      refuse.add("option:type",
                 "option type='%s' is not valid; valid values: bytes (default), complex", value);
  }
  parse_number(options, refuse, "elements", 1, kMaxElements, s.elements);
  s.domain_id = psb::sdk::id_in_range(cfg.run_id ? cfg.run_id : "", 1, 200);
  parse_number(options, refuse, "domain_id", 0, kMaxDomainId, s.domain_id);
  if (const char *value = options.find("profiles_file")) {
    if (*value == '\0')
      refuse.add("option:profiles_file",
                 "option profiles_file is empty; give the path of a Fast DDS XML profiles file");
    s.profiles_file = value;
  }
  if (const char *value = options.find("participant_profile")) {
    if (*value == '\0')
      refuse.add("option:participant_profile",
                 "option participant_profile is empty; give a profile name from "
                 "profiles_file, or leave it out to use the file's default profile");
    s.participant_profile = value;
  }
  if (options.has("elements") && s.type != DataType::complex)
    refuse.add(
        "option:elements",
        "option elements applies to type=complex only; add --option type=complex or drop elements");
}

void check_transport(const Settings &s, psb::sdk::Refusals &refuse) {
  const bool vendor_config = !s.profiles_file.empty();
  if (!s.participant_profile.empty() && !vendor_config)
    refuse.add("option:participant_profile",
               "option participant_profile needs option profiles_file=PATH (the "
               "XML file that defines it) and --transport config");
  if (vendor_config && s.transport != Transport::config)
    refuse.add("option:profiles_file",
               "option profiles_file needs --transport config: the XML decides the "
               "transports then, and the result must say so instead of '%s'",
               transport_name(s.transport));
  if (!vendor_config && s.transport == Transport::config)
    refuse.add("transport",
               "--transport config needs --option profiles_file=PATH (a Fast DDS "
               "XML profiles file); or choose builtin, udp, multicast or shm");
}

void check_qos(const Settings &s, psb::sdk::Refusals &refuse) {
  // A reliability, durability, history or notify that is not a psb_* value: refused by the
  // SDK (psb::sdk::refuse_outside_caps).
  const psb_qos &q = s.qos;
  if (q.durability == PSB_TRANSIENT_LOCAL && q.reliability != PSB_RELIABLE)
    refuse.add("durability",
               "durability transient_local needs reliability reliable: Fast DDS "
               "2.9's best-effort (stateless) writer sends no history to late-joining "
               "readers");
  if (q.history == PSB_KEEP_LAST && (q.history_depth == 0 || q.history_depth > INT32_MAX))
    refuse.add("history",
               "history keep_last:%u is not valid; keep_last:N needs "
               "1 <= N <= %d (Fast DDS's depth is an int32)",
               q.history_depth, INT32_MAX);
}

}  // namespace

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it selects the DDS domain");
  int t = 0;
  while (kTransports[t] != nullptr &&
         (cfg.transport == nullptr || std::strcmp(cfg.transport, kTransports[t]) != 0))
    ++t;
  s.transport = Transport(kTransports[t] != nullptr ? t : 0);
  if (kTransports[t] == nullptr)
    refuse.add("transport",
               "transport '%s' is not supported; supported: builtin, udp, multicast, shm, config",
               cfg.transport ? cfg.transport : "(null)");
  parse_options(cfg, refuse, s);
  if (s.security.on && s.domain_id > kMaxSecureDomainId)
    refuse.add("option:domain_id",
               "security=%s: domain_id=%u is outside the domains psbench's DDS Security "
               "documents cover (0 to %u); use domain_id=N with N <= %u",
               s.security.mode.c_str(), s.domain_id, kMaxSecureDomainId, kMaxSecureDomainId);
  check_transport(s, refuse);
  check_qos(s, refuse);
  if (psb::sdk::payload_in_range(cfg, refuse, kHeaderSize, kMaxPayload) &&
      s.type == DataType::complex && s.max_payload != kHeaderSize)
    refuse.add("size", "type complex is sized by option elements=N; use --size 32");
  if (cfg.use_loan)
    refuse.add("loan",
               "loaned writes are not provided (Fast DDS loans only plain, bounded "
               "types; psbench's types hold unbounded sequences)");
  return s;
}

}  // namespace psbfastdds
