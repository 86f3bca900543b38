#include "settings.h"

#include <cstring>

#include "psbench/sdk.hpp"
#include "psbench/sdk_broker.hpp"

namespace psbmqtt {
namespace {

void parse_qos(const psb_config &cfg, psb::sdk::Refusals &refuse, Settings *s) {
  const psb_qos &q = cfg.qos;
  s->qos = q.reliability == PSB_RELIABLE ? 1 : 0;
  s->retain = q.durability == PSB_TRANSIENT_LOCAL;
  s->persistent = q.durability == PSB_PERSISTENT;
  // MQTT keeps a session's messages for a client that is away at QoS 1 only (QoS 0
  // messages are dropped for it: MQTT 3.1.1, 3.1.2.4).
  if (s->persistent && q.reliability != PSB_RELIABLE)
    refuse.add("durability",
               "durability persistent needs reliability reliable: the broker keeps what a "
               "session missed, and resends what was not acknowledged, at QoS 1 only (QoS 0 "
               "messages are dropped for a client that is away); use --reliability reliable");
  // No history setting has an MQTT meaning for a live reader: the broker queues every
  // message for each subscriber until it reads them (up to its max_queued_messages), so
  // a reader that falls behind still gets everything, whatever depth were recorded.
  // transient_local is a retained message: the last one, for late joiners only.
  if (q.history != 0) {
    const std::string asked =
        q.history == PSB_KEEP_ALL ? "keep_all" : "keep_last:" + std::to_string(q.history_depth);
    refuse.add("history",
               "history %s cannot be honoured: the broker queues every message for each "
               "subscriber until it reads them (a reader that falls behind still gets all of "
               "them), and durability transient_local is a retained message, the topic's last "
               "one, for late joiners; leave history unset",
               asked.c_str());
  }
}

}  // namespace

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.run_id = cfg.run_id ? cfg.run_id : "";
  s.notify = cfg.notify;
  s.max_payload = cfg.max_payload;
  if (s.max_payload > kMaxPayload)
    refuse.add("size", "messages of %llu bytes are over the driver's limit of %llu bytes",
               (unsigned long long)s.max_payload, (unsigned long long)kMaxPayload);
  if (cfg.transport == nullptr || std::strcmp(cfg.transport, "tcp") != 0)
    refuse.add("transport", "transport '%s' is not offered; the only one is tcp (MQTT over TCP)",
               cfg.transport ? cfg.transport : "");
  if (cfg.use_loan) refuse.add("loan", "loans are not offered (libmosquitto copies every payload)");
  const psb::sdk::Options options(cfg, refuse);
  psb::sdk::broker_option(options, refuse, 1883, "mosquitto", "broker", s.broker);
  const char *keepalive_use = "0 (off) or 5 to 65535 seconds";
  const auto keepalive = options.number("keepalive", s.keepalive_s, 0, 65535, keepalive_use);
  if (keepalive > 0 && keepalive < 5)  // libmosquitto refuses 1 to 4
    refuse.add("option:keepalive", "option keepalive='%s': use %s", options.find("keepalive"),
               keepalive_use);
  else
    s.keepalive_s = int(keepalive);
  s.tcp_nodelay = options.flag("tcp_nodelay", true);
  s.max_inflight = int(options.number("max_inflight", s.max_inflight, 0, 65535,
                                      "1 to 65535 QoS 1 messages awaiting their PUBACK, or 0 "
                                      "for libmosquitto's largest (65535)"));
  s.tls = psb::sdk::tls_options(options, refuse);
  parse_qos(cfg, refuse, &s);
  return s;
}

std::string mqtt_topic(const Settings &s, const char *topic) {
  return "psbench/" + s.run_id + "/" + topic;
}

}  // namespace psbmqtt
