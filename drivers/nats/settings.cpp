#include "settings.h"

#include <cstring>

namespace psbnats {
namespace {

const char *find_option(const psb_config *cfg, const char *key) {
  for (size_t i = 0; i < cfg->option_count; ++i)
    if (std::strcmp(cfg->options[i].key, key) == 0) return cfg->options[i].value;
  return nullptr;
}

// What core NATS cannot honour. The node refuses these itself from the capability
// sets before check() is called; they are repeated here, with the reason, for any
// caller that goes straight to the ABI.
bool check_qos(const psb_config *cfg, psb_error *err) {
  if (cfg->qos.reliability != PSB_BEST_EFFORT) {
    psb_set_error(err,
              "nats: reliability 'reliable' is not available: core NATS has no acknowledgement "
              "or redelivery (that needs JetStream, and psbench's nats driver uses core NATS); "
              "use best_effort");
    return false;
  }
  if (cfg->qos.durability != PSB_VOLATILE) {
    psb_set_error(err,
              "nats: durability 'transient_local' is not available: core NATS keeps nothing for "
              "subscribers that join later (that needs JetStream, and psbench's nats driver uses "
              "core NATS); use volatile");
    return false;
  }
  if (cfg->qos.history != 0) {
    psb_set_error(err,
              "nats: history cannot be set: core NATS has no history; a subscriber's queue in "
              "cnats is bounded by its pending limits (65536 messages, 64 MiB), which drop new "
              "messages when full and are not a keep_last/keep_all history; leave --history unset");
    return false;
  }
  return true;
}

bool parse_port(const char *text, int *port) {
  if (*text == '\0' || std::strlen(text) > 5) return false;
  long v = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
  }
  if (v < 1 || v > 65535) return false;
  *port = int(v);
  return true;
}

// HOST:PORT, HOST a name or an IPv4 address, or [IPv6]:PORT.
bool parse_broker(const char *text, Settings *s) {
  std::string t(text);
  std::string host;
  size_t colon;
  if (!t.empty() && t[0] == '[') {
    size_t close = t.find(']');
    if (close == std::string::npos || close + 1 >= t.size() || t[close + 1] != ':') return false;
    host = t.substr(1, close - 1);
    colon = close + 1;
  } else {
    colon = t.rfind(':');
    if (colon == std::string::npos) return false;
    host = t.substr(0, colon);
    if (host.find(':') != std::string::npos) return false;  // IPv6 needs brackets
  }
  if (host.empty() || host.find_first_of(" \t/@[]") != std::string::npos) return false;
  if (!parse_port(t.c_str() + colon + 1, &s->port)) return false;
  s->host = host;
  s->address = t;
  s->url = "nats://" + t;
  return true;
}

}  // namespace

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  Settings s;
  if (std::strcmp(cfg->transport, "tcp") != 0) {
    psb_set_error(err, "nats: transport '%s' is not supported; this driver supports tcp",
              cfg->transport);
    return false;
  }
  if (!check_qos(cfg, err)) return false;
  const char *broker = find_option(cfg, "broker");
  if (broker == nullptr) {
    psb_set_error(err,
              "nats: option broker=HOST:PORT is missing; psbench sets it when it starts "
              "nats-server, or give the address of your own nats-server");
    return false;
  }
  if (!parse_broker(broker, &s)) {
    psb_set_error(err, "nats: option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:4222)", broker);
    return false;
  }
  if (const char *asap = find_option(cfg, "send_asap")) {
    if (std::strcmp(asap, "true") == 0)
      s.send_asap = true;
    else if (std::strcmp(asap, "false") == 0)
      s.send_asap = false;
    else {
      psb_set_error(err, "nats: option send_asap='%s': use true or false", asap);
      return false;
    }
  }
  if (out) *out = std::move(s);
  return true;
}

bool subject_of(const char *run_id, const char *topic, std::string *subject, psb_error *err) {
  for (const char *p = topic; *p; ++p) {
    if (*p == '.' || *p == '*' || *p == '>' || *p == ' ' || *p == '\t' || *p == '\r' ||
        *p == '\n') {
      psb_set_error(err,
                "nats: topic '%s' holds '%c', which is special in a NATS subject; use letters, "
                "digits, '_' and '-'", topic, *p);
      return false;
    }
  }
  if (*topic == '\0') {
    psb_set_error(err, "nats: empty topic name");
    return false;
  }
  *subject = std::string("psbench.") + run_id + "." + topic;
  return true;
}

}  // namespace psbnats
