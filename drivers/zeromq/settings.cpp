#include "settings.h"

#include <sys/un.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "psbench/sdk.hpp"

namespace psbzmq {
namespace {

bool parse_long(const char *text, long lo, long hi, long *out) {
  if (text == nullptr || *text == '\0') return false;
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// The longest topic suffix check() makes room for in an ipc path ("ping", "pong" and
// "data" are what the node uses).
constexpr size_t kIpcSuffixRoom = 8;

// Option key: a number of messages; *given says whether the option was given.
int parse_hwm(const psb::sdk::Options &options, psb::sdk::Refusals &refuse, const char *key,
              bool *given) {
  const char *text = options.find(key);
  *given = text != nullptr;
  long v = kDefaultHwm;
  if (text != nullptr && !parse_long(text, 0, INT_MAX, &v)) {
    refuse.add(std::string("option:") + key,
               "option %s='%s': use a number of messages from 0 to %d (0 = no limit, "
               "ZeroMQ's default is %d)",
               key, text, INT_MAX, kDefaultHwm);
    return kDefaultHwm;
  }
  return int(v);
}

// QoS. The node refuses what caps leave out; these say why to a direct caller too.
void parse_qos(const psb_config &cfg, psb::sdk::Refusals &refuse, Settings &s) {
  if (cfg.qos.reliability == PSB_RELIABLE)
    refuse.add("reliability",
               "reliability reliable is not supported: a PUB socket silently drops "
               "messages for a subscriber whose queue is at the high-water mark (sndhwm/"
               "rcvhwm) and nothing is resent after a reconnect; use best_effort");
  if (cfg.qos.durability == PSB_TRANSIENT_LOCAL)
    refuse.add("durability",
               "durability transient_local is not supported: a PUB socket keeps "
               "nothing for subscribers that join later; use volatile");
  if (cfg.qos.history == PSB_KEEP_ALL)
    refuse.add("history",
               "history keep_all is not supported: a PUB socket drops messages beyond "
               "the high-water mark instead of keeping them (sndhwm=0 rcvhwm=0 removes the "
               "limit, but that is a queue without bound, not a history)");
  if (cfg.qos.history == PSB_KEEP_LAST) {
    if (cfg.qos.history_depth != 1)
      refuse.add("history",
                 "history keep_last:%u is not supported: ZeroMQ's only history "
                 "setting is ZMQ_CONFLATE, which keeps the newest message only (keep_last:1); "
                 "its high-water mark is not keep_last:N, because a full queue drops the newest "
                 "message, not the oldest. Use keep_last:1, or leave history unset and size the "
                 "queues with sndhwm/rcvhwm",
                 cfg.qos.history_depth);
    s.conflate = true;
  }
}

void parse_transport(const psb_config &cfg, psb::sdk::Refusals &refuse, Settings &s) {
  const std::string transport = cfg.transport ? cfg.transport : "";
  if (transport == "tcp" || transport == "default")
    s.transport = Transport::tcp;
  else if (transport == "ipc")
    s.transport = Transport::ipc;
  else if (transport == "inproc")
    s.transport = Transport::inproc;
  else
    refuse.add("transport", "transport '%s' is not supported; this driver supports tcp|ipc|inproc",
               transport.c_str());
  if (s.transport == Transport::inproc && !cfg.intra_process)
    refuse.add("placement",
               "transport 'inproc' only connects sockets of one process, and "
               "this run's peers are other processes; use --placement intra, or "
               "transport ipc or tcp");
}

}  // namespace

const char *transport_name(Transport t) {
  switch (t) {
    case Transport::tcp: return "tcp";
    case Transport::ipc: return "ipc";
    case Transport::inproc: return "inproc";
  }
  return "?";
}

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.run_id = cfg.run_id ? cfg.run_id : "";
  s.notify = cfg.notify;
  s.max_payload = cfg.max_payload;
  parse_transport(cfg, refuse, s);
  if (s.run_id.empty()) refuse.add("driver", "the run id is empty; endpoints are named from it");
  parse_qos(cfg, refuse, s);

  const psb::sdk::Options options(cfg, refuse);
  bool sndhwm_given = false;
  s.sndhwm = parse_hwm(options, refuse, "sndhwm", &sndhwm_given);
  s.rcvhwm = parse_hwm(options, refuse, "rcvhwm", &s.rcvhwm_given);
  if (s.conflate && s.rcvhwm_given)
    refuse.add("option:rcvhwm",
               "option rcvhwm does not apply with history keep_last:1: ZMQ_CONFLATE keeps "
               "one message in the subscriber's queue and ignores the high-water mark");

  if (const char *base = options.find("port_base")) {
    long v;
    if (s.transport != Transport::tcp)
      refuse.add("option:port_base", "option port_base applies to transport tcp only (this run uses %s)",
                 transport_name(s.transport));
    else if (!parse_long(base, 1024, 65535 - long(kPortSpan), &v))
      refuse.add("option:port_base",
                 "option port_base='%s': use a number from 1024 to %u (the run's "
                 "ports lie in port_base .. port_base+%u)",
                 base, 65535 - kPortSpan, kPortSpan - 1);
    else
      s.port_base = unsigned(v);
  }

  if (s.transport == Transport::ipc) {
    // The socket file's path must fit sockaddr_un.sun_path with its terminating NUL.
    size_t longest = ipc_directory(s.run_id).size() + 1 + std::strlen("psb__") + s.run_id.size() +
                     kIpcSuffixRoom;
    if (longest >= sizeof(sockaddr_un{}.sun_path))
      refuse.add("driver",
                 "run id '%s' is too long for transport ipc: its socket paths (%zu "
                 "characters) would not fit the %zu of a Unix socket address; use a shorter "
                 "--run-id",
                 s.run_id.c_str(), longest, sizeof(sockaddr_un{}.sun_path) - 1);
  }
  return s;
}

unsigned tcp_port(const Settings &s, const std::string &topic) {
  const uint32_t block = psb::sdk::fnv1a32(s.run_id) % kRunBlocks;
  // The node names topics psb_<run id>_<suffix>; its three suffixes get fixed slots so
  // that the topics of one run never share a port.
  const std::string prefix = "psb_" + s.run_id + "_";
  std::string suffix = topic.compare(0, prefix.size(), prefix) == 0 ? topic.substr(prefix.size())
                                                                    : topic;
  unsigned slot;
  if (suffix == "ping")
    slot = 0;
  else if (suffix == "pong")
    slot = 1;
  else if (suffix == "data")
    slot = 2;
  else
    slot = psb::sdk::id_in_range(suffix, 3, kPortsPerRun - 3);
  return s.port_base + block * kPortsPerRun + slot;
}

std::string ipc_directory(const std::string &run_id) {
  return std::string(kIpcParent) + "/psbench-zeromq-" + run_id;
}

std::string ipc_path(const Settings &s, const std::string &topic) {
  return ipc_directory(s.run_id) + "/" + topic;
}

std::string endpoint_for(const Settings &s, const std::string &topic) {
  switch (s.transport) {
    case Transport::tcp: return "tcp://127.0.0.1:" + std::to_string(tcp_port(s, topic));
    case Transport::ipc: return "ipc://" + ipc_path(s, topic);
    case Transport::inproc: return "inproc://" + topic;
  }
  return {};
}

}  // namespace psbzmq
