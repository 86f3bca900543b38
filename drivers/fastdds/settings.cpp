// Validation of a psb_config against what the fastdds driver can honour.
#include "settings.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "psbench/driver_support.h"

namespace psbfastdds {
namespace {

constexpr uint32_t kMaxElements = 32768;  // ~3.9 MB serialized, within kMaxPayload

uint32_t fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; ++s) h = (h ^ static_cast<uint8_t>(*s)) * 16777619u;
  return h;
}

bool parse_uint(const char *text, uint64_t max, uint64_t *out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v > max) return false;
  *out = v;
  return true;
}

bool parse_transport(const char *name, Transport *out) {
  static const Transport all[] = {Transport::builtin, Transport::udp, Transport::multicast,
                                  Transport::shm, Transport::config};
  for (Transport t : all) {
    if (name != nullptr && std::strcmp(name, transport_name(t)) == 0) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool parse_options(const psb_config *cfg, Settings *s, psb_error *err) {
  bool elements_given = false, domain_given = false;
  for (size_t i = 0; i < cfg->option_count; ++i) {
    const char *key = cfg->options[i].key ? cfg->options[i].key : "(null)";
    const char *value = cfg->options[i].value ? cfg->options[i].value : "";
    uint64_t n = 0;
    if (std::strcmp(key, "type") == 0) {
      if (std::strcmp(value, "bytes") == 0) {
        s->type = DataType::bytes;
      } else if (std::strcmp(value, "complex") == 0) {
        s->type = DataType::complex;
      } else {
        psb_set_error(err, "fastdds: option type='%s' is not valid; valid values: bytes (default), "
                       "complex", value);
        return false;
      }
    } else if (std::strcmp(key, "elements") == 0) {
      if (!parse_uint(value, kMaxElements, &n) || n == 0) {
        psb_set_error(err, "fastdds: option elements='%s' is not valid; elements=N with 1 <= N <= %u",
                  value, kMaxElements);
        return false;
      }
      s->elements = static_cast<uint32_t>(n);
      elements_given = true;
    } else if (std::strcmp(key, "domain_id") == 0) {
      if (!parse_uint(value, kMaxDomainId, &n)) {
        psb_set_error(err, "fastdds: option domain_id='%s' is not valid; domain_id=N with 0 <= N <= %u",
                  value, kMaxDomainId);
        return false;
      }
      s->domain_id = static_cast<uint32_t>(n);
      domain_given = true;
    } else if (std::strcmp(key, "profiles_file") == 0) {
      if (*value == '\0') {
        psb_set_error(err, "fastdds: option profiles_file is empty; give the path of a Fast DDS XML "
                       "profiles file");
        return false;
      }
      s->profiles_file = value;
    } else if (std::strcmp(key, "participant_profile") == 0) {
      if (*value == '\0') {
        psb_set_error(err, "fastdds: option participant_profile is empty; give a profile name from "
                       "profiles_file, or leave it out to use the file's default profile");
        return false;
      }
      s->participant_profile = value;
    } else {
      psb_set_error(err, "fastdds: unknown option '%s'; valid options: type, elements, domain_id, "
                     "profiles_file, participant_profile", key);
      return false;
    }
  }
  if (elements_given && s->type != DataType::complex) {
    psb_set_error(err, "fastdds: option elements applies to type=complex only; add --option "
                   "type=complex or drop elements");
    return false;
  }
  if (!domain_given) s->domain_id = 1 + fnv1a(cfg->run_id) % 200;
  return true;
}

bool check_transport(const Settings &s, psb_error *err) {
  const bool vendor_config = !s.profiles_file.empty();
  if (!s.participant_profile.empty() && !vendor_config) {
    psb_set_error(err, "fastdds: option participant_profile needs option profiles_file=PATH (the "
                   "XML file that defines it) and --transport config");
    return false;
  }
  if (vendor_config && s.transport != Transport::config) {
    psb_set_error(err, "fastdds: option profiles_file needs --transport config: the XML decides the "
                   "transports then, and the result must say so instead of '%s'",
              transport_name(s.transport));
    return false;
  }
  if (!vendor_config && s.transport == Transport::config) {
    psb_set_error(err, "fastdds: --transport config needs --option profiles_file=PATH (a Fast DDS "
                   "XML profiles file); or choose builtin, udp, multicast or shm");
    return false;
  }
  return true;
}

bool check_qos(const Settings &s, psb_error *err) {
  const psb_qos &q = s.qos;
  if (q.reliability != PSB_BEST_EFFORT && q.reliability != PSB_RELIABLE) {
    psb_set_error(err, "fastdds: reliability must be best_effort or reliable");
    return false;
  }
  if (q.durability != PSB_VOLATILE && q.durability != PSB_TRANSIENT_LOCAL) {
    psb_set_error(err, "fastdds: durability must be volatile or transient_local");
    return false;
  }
  if (q.durability == PSB_TRANSIENT_LOCAL && q.reliability != PSB_RELIABLE) {
    psb_set_error(err, "fastdds: durability transient_local needs reliability reliable: Fast DDS "
                   "2.9's best-effort (stateless) writer sends no history to late-joining "
                   "readers");
    return false;
  }
  if (q.history == PSB_KEEP_LAST && (q.history_depth == 0 || q.history_depth > INT32_MAX)) {
    psb_set_error(err, "fastdds: history keep_last:%u is not valid; keep_last:N needs "
                   "1 <= N <= %d (Fast DDS's depth is an int32)", q.history_depth, INT32_MAX);
    return false;
  }
  if (q.history != 0 && q.history != PSB_KEEP_LAST && q.history != PSB_KEEP_ALL) {
    psb_set_error(err, "fastdds: history must be keep_last:N or keep_all");
    return false;
  }
  return true;
}

}  // namespace

const char *transport_name(Transport t) {
  switch (t) {
    case Transport::builtin: return "builtin";
    case Transport::udp: return "udp";
    case Transport::multicast: return "multicast";
    case Transport::shm: return "shm";
    case Transport::config: return "config";
  }
  return "?";
}

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  if (cfg == nullptr) {
    psb_set_error(err, "fastdds: no configuration given");
    return false;
  }
  if (cfg->run_id == nullptr || *cfg->run_id == '\0') {
    psb_set_error(err, "fastdds: run_id is empty; it selects the DDS domain");
    return false;
  }
  Settings s;
  s.run_id = cfg->run_id;
  if (!parse_transport(cfg->transport, &s.transport)) {
    psb_set_error(err, "fastdds: transport '%s' is not supported; supported: builtin, udp, "
                   "multicast, shm, config",
              cfg->transport ? cfg->transport : "(null)");
    return false;
  }
  if (cfg->notify != PSB_NOTIFY_LISTENER && cfg->notify != PSB_NOTIFY_WAIT &&
      cfg->notify != PSB_NOTIFY_POLL) {
    psb_set_error(err, "fastdds: notify must be one of listener, wait, poll");
    return false;
  }
  s.notify = cfg->notify;
  s.qos = cfg->qos;
  s.max_payload = cfg->max_payload;
  if (!parse_options(cfg, &s, err) || !check_transport(s, err) || !check_qos(s, err))
    return false;
  if (s.max_payload < kHeaderSize || s.max_payload > kMaxPayload) {
    psb_set_error(err, "fastdds: max_payload %llu is not supported; supported: %llu to %llu bytes "
                   "(header included)",
              static_cast<unsigned long long>(s.max_payload),
              static_cast<unsigned long long>(kHeaderSize),
              static_cast<unsigned long long>(kMaxPayload));
    return false;
  }
  if (s.type == DataType::complex && s.max_payload != kHeaderSize) {
    psb_set_error(err, "fastdds: type complex is sized by option elements=N; use --size 32");
    return false;
  }
  if (cfg->use_loan) {
    psb_set_error(err, "fastdds: loaned writes are not provided (Fast DDS loans only plain, bounded "
                   "types; psbench's types hold unbounded sequences)");
    return false;
  }
  if (out != nullptr) *out = std::move(s);
  return true;
}

}  // namespace psbfastdds
