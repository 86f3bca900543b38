#include "settings.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "psbench/driver_support.h"

namespace psbmqtt {
namespace {

const char *find_option(const psb_config *cfg, const char *key) {
  for (size_t i = 0; i < cfg->option_count; ++i)
    if (std::strcmp(cfg->options[i].key, key) == 0) return cfg->options[i].value;
  return nullptr;
}

bool parse_int(const char *text, long lo, long hi, long *out) {
  if (text == nullptr || *text == '\0') return false;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// HOST:PORT, with [IPv6]:PORT accepted.
bool parse_broker(const char *text, Settings *s, psb_error *err) {
  std::string b(text);
  const size_t colon = b.rfind(':');
  long port = 0;
  bool ok = colon != std::string::npos && colon > 0 &&
            parse_int(b.c_str() + colon + 1, 1, 65535, &port);
  std::string host = ok ? b.substr(0, colon) : std::string();
  if (ok && host.front() == '[') {
    ok = host.size() > 2 && host.back() == ']';
    host = ok ? host.substr(1, host.size() - 2) : host;
  } else if (ok) {
    ok = host.find(':') == std::string::npos;  // a bare IPv6 literal needs brackets
  }
  if (!ok) {
    psb_set_error(err, "mqtt: option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:1883, or [::1]:1883)",
              text);
    return false;
  }
  s->broker = b;
  s->host = host;
  s->port = int(port);
  return true;
}

bool parse_qos(const psb_config *cfg, Settings *s, psb_error *err) {
  const psb_qos &q = cfg->qos;
  s->qos = q.reliability == PSB_RELIABLE ? 1 : 0;
  s->retain = q.durability == PSB_TRANSIENT_LOCAL;
  // No history setting has an MQTT meaning for a live reader: the broker queues every
  // message for each subscriber until it reads them (up to its max_queued_messages), so
  // a reader that falls behind still gets everything, whatever depth were recorded.
  // transient_local is a retained message: the last one, for late joiners only.
  if (q.history != 0) {
    const std::string asked =
        q.history == PSB_KEEP_ALL ? "keep_all" : "keep_last:" + std::to_string(q.history_depth);
    psb_set_error(err, "mqtt: history %s cannot be honoured: the broker queues every message "
                       "for each subscriber until it reads them (a reader that falls behind "
                       "still gets all of them), and durability transient_local is a retained "
                       "message, the topic's last one, for late joiners; leave history unset",
                  asked.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  Settings s;
  s.run_id = cfg->run_id ? cfg->run_id : "";
  s.notify = cfg->notify;
  s.max_payload = cfg->max_payload;
  if (s.max_payload > kMaxPayload) {
    psb_set_error(err, "mqtt: messages of %llu bytes are over the driver's limit of %llu bytes",
              (unsigned long long)s.max_payload, (unsigned long long)kMaxPayload);
    return false;
  }
  if (cfg->transport == nullptr || std::strcmp(cfg->transport, "tcp") != 0) {
    psb_set_error(err, "mqtt: transport '%s' is not offered; the only one is tcp (MQTT over TCP)",
              cfg->transport ? cfg->transport : "");
    return false;
  }
  if (cfg->use_loan) {
    psb_set_error(err, "mqtt: loans are not offered (libmosquitto copies every payload)");
    return false;
  }
  const char *broker = find_option(cfg, "broker");
  if (broker == nullptr) {
    psb_set_error(err, "mqtt: option broker=HOST:PORT is missing; psbench sets it when it starts "
                   "mosquitto, or give the address of your own broker");
    return false;
  }
  if (!parse_broker(broker, &s, err)) return false;
  if (const char *ka = find_option(cfg, "keepalive")) {
    long v = 0;
    if (!parse_int(ka, 0, 65535, &v) || (v != 0 && v < 5)) {
      psb_set_error(err, "mqtt: option keepalive='%s': use 0 (off) or 5 to 65535 seconds", ka);
      return false;
    }
    s.keepalive_s = int(v);
  }
  if (const char *nd = find_option(cfg, "tcp_nodelay")) {
    if (std::strcmp(nd, "true") == 0 || std::strcmp(nd, "1") == 0)
      s.tcp_nodelay = true;
    else if (std::strcmp(nd, "false") == 0 || std::strcmp(nd, "0") == 0)
      s.tcp_nodelay = false;
    else {
      psb_set_error(err, "mqtt: option tcp_nodelay='%s': use true or false", nd);
      return false;
    }
  }
  if (const char *mi = find_option(cfg, "max_inflight")) {
    long v = 0;
    if (!parse_int(mi, 0, 65535, &v)) {
      psb_set_error(err, "mqtt: option max_inflight='%s': use 1 to 65535 QoS 1 messages awaiting "
                     "their PUBACK, or 0 for libmosquitto's largest (65535)",
                mi);
      return false;
    }
    s.max_inflight = int(v);
  }
  if (!parse_qos(cfg, &s, err)) return false;
  if (out != nullptr) *out = std::move(s);
  return true;
}

std::string mqtt_topic(const Settings &s, const char *topic) {
  return "psbench/" + s.run_id + "/" + topic;
}

}  // namespace psbmqtt
