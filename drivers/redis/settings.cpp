#include "settings.h"

#include <cctype>
#include <cstring>

#include "psbench/driver_support.h"

namespace psbredis {
namespace {

const char *find_option(const psb_config *cfg, const char *key) {
  for (size_t i = 0; i < cfg->option_count; ++i)
    if (cfg->options[i].key && std::strcmp(cfg->options[i].key, key) == 0) return cfg->options[i].value;
  return nullptr;
}

// "HOST:PORT" or "[IPv6]:PORT", port 1..65535.
bool parse_broker(const char *value, std::string *host, int *port, psb_error *err) {
  const std::string v = value ? value : "";
  std::string h, p;
  if (!v.empty() && v[0] == '[') {
    const size_t close = v.find(']');
    if (close != std::string::npos && close + 1 < v.size() && v[close + 1] == ':') {
      h = v.substr(1, close - 1);
      p = v.substr(close + 2);
    }
  } else if (const size_t colon = v.rfind(':'); colon != std::string::npos) {
    h = v.substr(0, colon);
    p = v.substr(colon + 1);
    if (h.find(':') != std::string::npos) h.clear();  // a bare IPv6 address: ambiguous
  }
  long n = 0;
  bool digits = !p.empty() && p.size() <= 5;
  for (char c : p) {
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) n = n * 10 + (c - '0');
  }
  if (h.empty() || !digits || n < 1 || n > 65535) {
    psb_set_error(err,
              "redis: option broker='%s' is not HOST:PORT (e.g. 127.0.0.1:6379, or [::1]:6379; "
              "port 1 to 65535)",
              v.c_str());
    return false;
  }
  *host = h;
  *port = static_cast<int>(n);
  return true;
}

}  // namespace

std::string Settings::address() const {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + std::to_string(port)
                                              : host + ":" + std::to_string(port);
}

std::string Settings::channel(const char *topic) const {
  return "psbench:" + run_id + ":" + topic;
}

bool parse_settings(const psb_config *cfg, Settings *out, psb_error *err) {
  Settings s;
  if (cfg == nullptr || cfg->run_id == nullptr || cfg->run_id[0] == '\0') {
    psb_set_error(err, "redis: the run id is empty; channel names are made from it");
    return false;
  }
  s.run_id = cfg->run_id;
  if (cfg->transport == nullptr || std::strcmp(cfg->transport, "tcp") != 0) {
    psb_set_error(err, "redis: transport '%s' is not supported; this driver supports tcp",
              cfg->transport ? cfg->transport : "(none)");
    return false;
  }
  if (cfg->qos.reliability != PSB_BEST_EFFORT) {
    psb_set_error(err,
              "redis: reliability 'reliable' is not supported: Redis pub/sub is fire-and-forget "
              "(no acknowledgement, no retransmission, no queue); a subscriber that is "
              "disconnected, or slower than the server's output buffer limit allows, loses "
              "messages. Use best_effort");
    return false;
  }
  if (cfg->qos.durability != PSB_VOLATILE) {
    psb_set_error(err,
              "redis: durability 'transient_local' is not supported: Redis pub/sub stores no "
              "message; a subscriber gets only what is published after its SUBSCRIBE. Use "
              "volatile");
    return false;
  }
  if (cfg->qos.history != 0) {
    psb_set_error(err,
              "redis: history '%s' is not supported: Redis pub/sub keeps no history; the "
              "server forwards each message once to the subscribers of the moment (its only "
              "queue is the per-client output buffer). Leave --history unset",
              cfg->qos.history == PSB_KEEP_ALL ? "keep_all" : "keep_last");
    return false;
  }
  if (cfg->notify != PSB_NOTIFY_LISTENER && cfg->notify != PSB_NOTIFY_WAIT &&
      cfg->notify != PSB_NOTIFY_POLL) {
    psb_set_error(err, "redis: notify mode %u is not one of listener, wait, poll", cfg->notify);
    return false;
  }
  s.notify = cfg->notify;
  if (cfg->max_payload > kMaxPayload) {
    psb_set_error(err, "redis: size %llu bytes is over this driver's largest message of %llu bytes",
              static_cast<unsigned long long>(cfg->max_payload),
              static_cast<unsigned long long>(kMaxPayload));
    return false;
  }
  s.max_payload = cfg->max_payload;
  if (cfg->use_loan) {
    psb_set_error(err, "redis: --loan is not supported (no zero-copy write)");
    return false;
  }
  const char *broker = find_option(cfg, "broker");
  if (broker == nullptr) {
    psb_set_error(err,
              "redis: option broker=HOST:PORT is missing; psbench sets it when it starts "
              "redis-server, or give the address of your own redis-server");
    return false;
  }
  if (!parse_broker(broker, &s.host, &s.port, err)) return false;
  if (out != nullptr) *out = std::move(s);
  return true;
}

}  // namespace psbredis
