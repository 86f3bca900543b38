// Validation of a psb_config against what the cyclonedds driver can honour.
#include "settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "error.h"
#include "shm_support.h"

namespace psbcyc {
namespace {

const char *find_option(const psb_config *cfg, const char *key) {
  for (size_t i = 0; i < cfg->option_count; ++i)
    if (cfg->options[i].key != nullptr && std::strcmp(cfg->options[i].key, key) == 0)
      return cfg->options[i].value != nullptr ? cfg->options[i].value : "";
  return nullptr;
}

bool parse_uint(const char *text, uint32_t lo, uint32_t hi, uint32_t *out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

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

bool parse_type_options(const psb_config *cfg, Settings &s, psb_error *err) {
  const char *type = find_option(cfg, "type");
  if (type == nullptr || std::strcmp(type, "bytes") == 0) {
    s.type = DataType::bytes;
  } else if (std::strcmp(type, "complex") == 0) {
    s.type = DataType::complex;
  } else {
    psb_set_error(err, "cyclonedds: option type='%s' is not known; use type=bytes (default) or type=complex", type);
    return false;
  }
  const char *elements = find_option(cfg, "elements");
  if (elements != nullptr && s.type != DataType::complex) {
    psb_set_error(err, "cyclonedds: option elements applies to type=complex only; add --option type=complex");
    return false;
  }
  if (elements != nullptr && !parse_uint(elements, 1, kMaxElements, &s.elements)) {
    psb_set_error(err, "cyclonedds: option elements='%s': use a whole number from 1 to %u", elements, kMaxElements);
    return false;
  }
  if (s.type == DataType::complex && cfg->max_payload != 32) {
    psb_set_error(err, "cyclonedds: type complex is sized by option elements=N; use --size 32");
    return false;
  }
  return true;
}

bool parse_transport_options(const psb_config *cfg, Settings &s, psb_error *err) {
  if (!parse_transport(cfg->transport, &s.transport)) {
    psb_set_error(err, "cyclonedds: transport '%s' is not known; use udp (default), multicast, shm or config",
              cfg->transport ? cfg->transport : "(null)");
    return false;
  }
  const char *uri = find_option(cfg, "cyclonedds_uri");
  if (uri != nullptr && s.transport != Transport::config) {
    psb_set_error(err, "cyclonedds: option cyclonedds_uri is a vendor configuration; it needs --transport config "
                   "(psbench then records transport 'config' instead of claiming one it did not choose)");
    return false;
  }
  if (s.transport == Transport::config) {
    if (uri == nullptr || *uri == '\0') {
      psb_set_error(err, "cyclonedds: transport config needs option cyclonedds_uri=VALUE "
                     "(what CYCLONEDDS_URI would hold: file://PATH or inline XML)");
      return false;
    }
    s.vendor_config = uri;
  }
  const char *batch = find_option(cfg, "write_batch");
  if (batch != nullptr && std::strcmp(batch, "true") != 0 && std::strcmp(batch, "false") != 0) {
    psb_set_error(err, "cyclonedds: option write_batch='%s': use write_batch=true or write_batch=false", batch);
    return false;
  }
  s.write_batch = batch != nullptr && std::strcmp(batch, "true") == 0;
  if (s.write_batch && s.transport == Transport::config) {
    psb_set_error(err, "cyclonedds: option write_batch does not apply to transport config (psbench does not "
                   "edit your configuration); write <Internal><WriteBatch>true</WriteBatch></Internal> in it");
    return false;
  }
  const char *domain = find_option(cfg, "domain_id");
  s.domain_id = default_domain_id(cfg->run_id);
  if (domain != nullptr && !parse_uint(domain, 0, kMaxDomainId, &s.domain_id)) {
    psb_set_error(err, "cyclonedds: option domain_id='%s': use a whole number from 0 to %u", domain, kMaxDomainId);
    return false;
  }
  return true;
}

// Cyclone 0.10.2 puts an endpoint on iceoryx only under conditions it does not report
// as errors (it quietly uses the network instead); refuse what would not go over shm.
bool check_shm(const psb_config *cfg, const Settings &s, psb_error *err) {
  if (cfg->qos.history == PSB_KEEP_ALL) {
    psb_set_error(err, "cyclonedds: transport shm cannot keep_all: Cyclone 0.10.2 carries only keep_last "
                   "endpoints over iceoryx; use --history keep_last:N");
    return false;
  }
  const uint64_t max_history = iox_max_publisher_history();
  if (cfg->qos.durability == PSB_TRANSIENT_LOCAL && cfg->qos.history == PSB_KEEP_LAST &&
      cfg->qos.history_depth > max_history) {
    psb_set_error(err, "cyclonedds: transport shm keeps at most %llu samples for late joiners (iceoryx's "
                   "publisher history); use --history keep_last:N with N <= %llu",
              static_cast<unsigned long long>(max_history), static_cast<unsigned long long>(max_history));
    return false;
  }
  if (cdr_size(s) > kShmMaxCdrSize) {
    if (s.type == DataType::bytes)
      psb_set_error(err, "cyclonedds: transport shm carries messages up to %llu bytes (the largest chunk of "
                     "iox-roudi's default mempools is 4 MiB, less Cyclone's headers); use a smaller --size",
                static_cast<unsigned long long>(kShmMaxCdrSize - 8));
    else
      psb_set_error(err, "cyclonedds: transport shm carries complex samples up to %llu elements (the largest "
                     "chunk of iox-roudi's default mempools is 4 MiB); use a smaller elements=N",
                static_cast<unsigned long long>((kShmMaxCdrSize - 40) / 120));
    return false;
  }
  if (!roudi_running()) {
    psb_set_error(err, "cyclonedds: transport shm needs iceoryx's RouDi daemon: start iox-roudi first");
    return false;
  }
  return true;
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

uint32_t default_domain_id(const char *run_id) {
  uint32_t h = 2166136261u;
  for (const char *c = run_id ? run_id : ""; *c; ++c) {
    h ^= static_cast<uint8_t>(*c);
    h *= 16777619u;
  }
  return 1 + h % 200;
}

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  if (cfg == nullptr || cfg->run_id == nullptr || *cfg->run_id == '\0') {
    psb_set_error(err, "cyclonedds: the run id is empty; it names the topics and the domain");
    return false;
  }
  if (cfg->max_payload < 32 || cfg->max_payload > kMaxPayload) {
    psb_set_error(err, "cyclonedds: max_payload %llu is not supported; use 32 to %llu bytes (header included)",
              static_cast<unsigned long long>(cfg->max_payload), static_cast<unsigned long long>(kMaxPayload));
    return false;
  }
  Settings s;
  s.run_id = cfg->run_id;
  s.notify = cfg->notify;
  s.qos = cfg->qos;
  s.max_payload = cfg->max_payload;
  if (!parse_type_options(cfg, s, err) || !parse_transport_options(cfg, s, err)) return false;
  if (s.qos.history == PSB_KEEP_LAST && s.qos.history_depth == 0) {
    psb_set_error(err, "cyclonedds: history keep_last needs a depth of at least 1 (keep_last:N)");
    return false;
  }
  if (s.qos.durability == PSB_TRANSIENT_LOCAL && s.qos.reliability != PSB_RELIABLE) {
    psb_set_error(err, "cyclonedds: durability transient_local needs --reliability reliable: Cyclone hands a late "
                   "joiner its history through the reliable protocol only, so a best-effort reader in another "
                   "process would get none");
    return false;
  }
  if (s.transport == Transport::shm && !check_shm(cfg, s, err)) return false;
  if (out != nullptr) *out = std::move(s);
  return true;
}

}  // namespace psbcyc
