// Validation of a psb_config against what the cyclonedds driver can honour.
#include "settings.h"

#include <cstring>

#include "error.h"
#include "shm_support.h"

namespace psbcyc {
namespace {

bool parse_transport(const char *name, Transport *out) {
  static const Transport all[] = {Transport::udp, Transport::multicast, Transport::shm,
                                  Transport::config};
  for (Transport t : all)
    if (name != nullptr && std::strcmp(name, transport_name(t)) == 0) {
      *out = t;
      return true;
    }
  return false;
}

void parse_type_options(const psb_config &cfg, const psb::sdk::Options &options,
                        psb::sdk::Refusals &refuse, Settings &s) {
  const char *type = options.find("type");
  if (type == nullptr || std::strcmp(type, "bytes") == 0) {
    s.type = DataType::bytes;
  } else if (std::strcmp(type, "complex") == 0) {
    s.type = DataType::complex;
  } else {
    refuse.add("option:type", "option type='%s' is not known; use type=bytes (default) or type=complex", type);
  }
  if (options.has("elements") && s.type != DataType::complex)
    refuse.add("option:elements", "option elements applies to type=complex only; add --option type=complex");
  s.elements = uint32_t(options.number("elements", kDefaultElements, 1, kMaxElements));
  if (s.type == DataType::complex && cfg.max_payload != 32)
    refuse.add("size", "type complex is sized by option elements=N; use --size 32");
}

void parse_transport_options(const psb_config &cfg, const psb::sdk::Options &options,
                             psb::sdk::Refusals &refuse, Settings &s) {
  if (!parse_transport(cfg.transport, &s.transport))
    refuse.add("transport", "transport '%s' is not known; use udp (default), multicast, shm or config",
               cfg.transport ? cfg.transport : "(null)");
  const char *uri = options.find("cyclonedds_uri");
  if (uri != nullptr && s.transport != Transport::config)
    refuse.add("option:cyclonedds_uri",
               "option cyclonedds_uri is a vendor configuration; it needs --transport config "
               "(psbench then records transport 'config' instead of claiming one it did not choose)");
  if (s.transport == Transport::config) {
    if (uri == nullptr || *uri == '\0')
      refuse.add("option:cyclonedds_uri",
                 "transport config needs option cyclonedds_uri=VALUE "
                 "(what CYCLONEDDS_URI would hold: file://PATH or inline XML)");
    else
      s.vendor_config = uri;
  }
  // Not Options::flag: write_batch takes true or false only, as it always has.
  const char *batch = options.find("write_batch");
  if (batch != nullptr && std::strcmp(batch, "true") != 0 && std::strcmp(batch, "false") != 0)
    refuse.add("option:write_batch", "option write_batch='%s': use write_batch=true or write_batch=false", batch);
  s.write_batch = batch != nullptr && std::strcmp(batch, "true") == 0;
  if (s.write_batch && s.transport == Transport::config)
    refuse.add("option:write_batch",
               "option write_batch does not apply to transport config (psbench does not "
               "edit your configuration); write <Internal><WriteBatch>true</WriteBatch></Internal> in it");
  s.domain_id = uint32_t(options.number("domain_id", default_domain_id(cfg.run_id), 0, kMaxDomainId));
}

// Cyclone 0.10.2 puts an endpoint on iceoryx only under conditions it does not report
// as errors (it quietly uses the network instead); refuse what would not go over shm.
void check_shm(const psb_config &cfg, psb::sdk::Refusals &refuse, const Settings &s) {
  if (cfg.qos.history == PSB_KEEP_ALL)
    refuse.add("history",
               "transport shm cannot keep_all: Cyclone 0.10.2 carries only keep_last "
               "endpoints over iceoryx; use --history keep_last:N");
  const uint64_t max_history = iox_max_publisher_history();
  if (cfg.qos.durability == PSB_TRANSIENT_LOCAL && cfg.qos.history == PSB_KEEP_LAST &&
      cfg.qos.history_depth > max_history)
    refuse.add("history",
               "transport shm keeps at most %llu samples for late joiners (iceoryx's "
               "publisher history); use --history keep_last:N with N <= %llu",
               static_cast<unsigned long long>(max_history), static_cast<unsigned long long>(max_history));
  if (cdr_size(s) > kShmMaxCdrSize) {
    if (s.type == DataType::bytes)
      refuse.add("size",
                 "transport shm carries messages up to %llu bytes (the largest chunk of "
                 "iox-roudi's default mempools is 4 MiB, less Cyclone's headers); use a smaller --size",
                 static_cast<unsigned long long>(kShmMaxCdrSize - 8));
    else
      refuse.add("option:elements",
                 "transport shm carries complex samples up to %llu elements (the largest "
                 "chunk of iox-roudi's default mempools is 4 MiB); use a smaller elements=N",
                 static_cast<unsigned long long>((kShmMaxCdrSize - 40) / 120));
  }
  if (!roudi_running())
    refuse.add("transport", "transport shm needs iceoryx's RouDi daemon: start iox-roudi first");
}

}  // namespace

const char *transport_name(Transport t) {
  switch (t) {
    case Transport::udp: return "udp";
    case Transport::multicast: return "multicast";
    case Transport::shm: return "shm";
    case Transport::config: return "config";
  }
  return "?";
}

uint32_t default_domain_id(const char *run_id) { return psb::sdk::id_in_range(run_id ? run_id : "", 1, 200); }

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  if (cfg.run_id == nullptr || *cfg.run_id == '\0')
    refuse.add("driver", "the run id is empty; it names the topics and the domain");
  else
    s.run_id = cfg.run_id;
  const bool size_ok = cfg.max_payload >= 32 && cfg.max_payload <= kMaxPayload;
  if (!size_ok)
    refuse.add("size", "max_payload %llu is not supported; use 32 to %llu bytes (header included)",
               static_cast<unsigned long long>(cfg.max_payload), static_cast<unsigned long long>(kMaxPayload));
  const psb::sdk::Options options(cfg, refuse);
  s.notify = cfg.notify;
  s.qos = cfg.qos;
  s.max_payload = cfg.max_payload;
  parse_type_options(cfg, options, refuse, s);
  parse_transport_options(cfg, options, refuse, s);
  if (s.qos.history == PSB_KEEP_LAST && s.qos.history_depth == 0)
    refuse.add("history", "history keep_last needs a depth of at least 1 (keep_last:N)");
  if (s.qos.durability == PSB_TRANSIENT_LOCAL && s.qos.reliability != PSB_RELIABLE)
    refuse.add("durability",
               "durability transient_local needs --reliability reliable: Cyclone hands a late "
               "joiner its history through the reliable protocol only, so a best-effort reader in another "
               "process would get none");
  if (s.transport == Transport::shm && size_ok) check_shm(cfg, refuse, s);
  return s;
}

}  // namespace psbcyc
