#include "settings.h"

#include <cstring>

#include "psbench/sdk.hpp"

namespace psbnats {
namespace {

using psb::sdk::fail;

// What core NATS cannot honour. The node refuses these itself from the capability
// sets before check() is called; they are repeated here, with the reason, for any
// caller that goes straight to the ABI.
void check_qos(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  if (cfg.qos.reliability != PSB_BEST_EFFORT)
    refuse.add("reliability",
               "reliability 'reliable' is not available: core NATS has no acknowledgement "
               "or redelivery (that needs JetStream, and psbench's nats driver uses core NATS); "
               "use best_effort");
  if (cfg.qos.durability != PSB_VOLATILE)
    refuse.add("durability",
               "durability 'transient_local' is not available: core NATS keeps nothing for "
               "subscribers that join later (that needs JetStream, and psbench's nats driver uses "
               "core NATS); use volatile");
  if (cfg.qos.history != 0)
    refuse.add(
        "history",
        "history cannot be set: core NATS has no history; a subscriber's queue in "
        "cnats is bounded by its pending limits (65536 messages, 64 MiB), which drop new "
        "messages when full and are not a keep_last/keep_all history; leave --history unset");
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

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  if (std::strcmp(cfg.transport, "tcp") != 0)
    refuse.add("transport", "transport '%s' is not supported; this driver supports tcp",
               cfg.transport);
  check_qos(cfg, refuse);
  const psb::sdk::Options options(cfg, refuse);
  const char *broker = options.required("broker", "HOST:PORT",
                                        "psbench sets it when it starts nats-server, or give "
                                        "the address of your own nats-server");
  if (broker != nullptr && !parse_broker(broker, &s))
    refuse.add("option:broker", "option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:4222)",
               broker);
  s.send_asap = options.flag("send_asap", true);
  s.tls = psb::sdk::tls_options(options, refuse);
  if (s.tls.on) s.url = "tls://" + s.address;
  return s;
}

std::string subject_of(const std::string &run_id, const char *topic) {
  for (const char *p = topic; *p; ++p)
    if (*p == '.' || *p == '*' || *p == '>' || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      fail(
          "topic '%s' holds '%c', which is special in a NATS subject; use letters, "
          "digits, '_' and '-'",
          topic, *p);
  if (*topic == '\0') fail("empty topic name");
  return "psbench." + run_id + "." + topic;
}

}  // namespace psbnats
