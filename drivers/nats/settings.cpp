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

// HOST:PORT or [IPv6]:PORT (the SDK's broker_address), HOST without what a NATS URL
// would read otherwise.
void parse_broker(const char *text, psb::sdk::Refusals &refuse, Settings *s) {
  psb::sdk::BrokerAddress b;
  if (!psb::sdk::broker_address(text, 4222, refuse, b)) return;
  if (b.host.find_first_of(" \t/@[]") != std::string::npos) {
    refuse.add("option:broker", "option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:4222)", text);
    return;
  }
  s->host = b.host;
  s->port = b.port;
  s->address = b.text;
  s->url = "nats://" + b.text;
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
  if (broker != nullptr) parse_broker(broker, refuse, &s);
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
