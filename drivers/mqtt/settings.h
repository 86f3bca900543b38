// What one run asks of the mqtt driver, parsed once from psb_config (check() and open()
// share it), and the MQTT names derived from it.
#ifndef PSBENCH_MQTT_SETTINGS_H
#define PSBENCH_MQTT_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"
#include "psbench/sdk_security.hpp"

namespace psbmqtt {

// MQTT itself allows 256 MB; psbench messages stop at 4 MiB.
constexpr uint64_t kMaxPayload = 4194304;

struct Settings {
  std::string run_id;
  psb::sdk::BrokerAddress broker;  // option broker: text as given, host, port
  int keepalive_s = 60;            // option keepalive; 0 = off
  bool tcp_nodelay = true;         // option tcp_nodelay
  int max_inflight = -1;           // option max_inflight (QoS 1); -1: libmosquitto's default (20)
  int qos = 0;                     // best_effort -> 0, reliable -> 1
  bool retain = false;             // transient_local -> every message published retained
  // durability persistent: a session that outlives the connection (clean session off),
  // QoS 1, and a connection that reconnects by itself when the broker goes away.
  bool persistent = false;
  uint32_t notify = PSB_NOTIFY_WAIT;
  uint64_t max_payload = 0;  // the run's largest message
  psb::sdk::Security tls;    // options security=tls, security_dir: mutual TLS
};

// Records every refusal: anything it cannot honour, an option missing or malformed
// (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

// The MQTT topic of a psbench topic: psbench/<run_id>/<topic>.
std::string mqtt_topic(const Settings &s, const char *topic);

}  // namespace psbmqtt

#endif
