// What a run asks of the zeromq driver, parsed from psb_config once (check and open),
// and the addresses derived from it: where the writer of a topic binds and its readers
// connect.
#pragma once
#include <sys/un.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"

namespace psbzmq {

enum class Transport { tcp, ipc, inproc };
// Their names, in the order of Transport; also caps.transports.
inline constexpr const char *kTransportNames[] = {"tcp", "ipc", "inproc", nullptr};

constexpr uint64_t kMaxPayload = 4u << 20;  // 4 MiB; libzmq itself has no limit
constexpr int kDefaultHwm = 1000;           // ZeroMQ's own default for both directions
// tcp ports: a block of kPortsPerRun (or several: ports_per_run) per run (tcp_port).
constexpr unsigned kPortsPerRun = 8;
constexpr unsigned kRunBlocks = 1536;
constexpr unsigned kPortSpan = kPortsPerRun * kRunBlocks;  // 12288
// Default range 20000..32287: below Linux's ephemeral range (32768..60999), so no
// outgoing connection ever holds one of these ports, and a connect to a port nobody
// listens on cannot meet itself (TCP self-connect needs an ephemeral port).
constexpr unsigned kDefaultPortBase = 20000;

// run_id, and across hosts local_address and peer_addresses (tcp only), from RunSettings.
struct Settings : psb::sdk::RunSettings {
  Transport transport = Transport::tcp;
  int sndhwm = kDefaultHwm, rcvhwm = kDefaultHwm;
  unsigned port_base = kDefaultPortBase;
  bool conflate = false;  // history keep_last:1 -> ZMQ_CONFLATE on the SUB socket
};

// tcp only: how many ports the run's block holds. 8 (ping, pong, data and 5 hashed slots),
// or with run_topics (ABI 8) 8 x ceil(topics / 8): a slot for each topic of the run, the
// same in every process, which computes it from the same list.
inline unsigned ports_per_run(const Settings &s) {
  const size_t blocks = (s.run_topics.size() + kPortsPerRun - 1) / kPortsPerRun;
  return unsigned(std::max<size_t>(blocks, 1) * kPortsPerRun);
}

// tcp only: the port of a topic, port_base + block size x (FNV-1a(run id) % blocks) + slot.
inline unsigned tcp_port(const Settings &s, const std::string &topic) {
  const unsigned per_run = ports_per_run(s);
  const uint32_t block = psb::sdk::fnv1a32(s.run_id) % (kPortSpan / per_run);
  unsigned slot = 0;
  if (!s.run_topics.empty()) {
    // The topic's index among the run's topics: no other topic of the run has it.
    const int index = s.topic_index(topic);
    if (index < 0)
      psb::sdk::fail(
          "topic %s is not among the run's %zu topics (psb_config.run_topics), so it has no "
          "port of its own; list every topic the run uses",
          topic.c_str(), s.run_topics.size());
    slot = unsigned(index);
  } else {
    // The node names topics psb_<run id>_<suffix>; its three suffixes get fixed slots, any
    // other one of the 5 left by its hash (two such topics may meet: a run with more
    // topics lists them in run_topics).
    const std::string prefix = "psb_" + s.run_id + "_";
    std::string suffix =
        topic.compare(0, prefix.size(), prefix) == 0 ? topic.substr(prefix.size()) : topic;
    const int fixed = psb::sdk::index_in(suffix.c_str(), {"ping", "pong", "data"});
    slot = fixed >= 0 ? unsigned(fixed) : psb::sdk::id_in_range(suffix, 3, kPortsPerRun - 3);
  }
  return s.port_base + block * per_run + slot;
}

// ipc only: the run's private directory and a topic's socket file in it,
// /tmp/psbench-zeromq-<run id>/<topic>.
inline std::string ipc_directory(const std::string &run_id) {
  return "/tmp/psbench-zeromq-" + run_id;
}

inline std::string ipc_path(const Settings &s, const std::string &topic) {
  return ipc_directory(s.run_id) + "/" + topic;
}

// The endpoint the writer binds, e.g. "tcp://127.0.0.1:20417" (across hosts
// "tcp://<local address>:20417"), "ipc:///tmp/psbench-zeromq-R/psb_R_ping",
// "inproc://psb_R_ping".
inline std::string endpoint_for(const Settings &s, const std::string &topic) {
  if (s.transport == Transport::tcp)
    return "tcp://" + s.address() + ":" + std::to_string(tcp_port(s, topic));
  return s.transport == Transport::ipc ? "ipc://" + ipc_path(s, topic) : "inproc://" + topic;
}

// The endpoints a reader connects to: the one the writer binds on this host, or across
// hosts the topic's port on every peer address (the writer may be on any of them; one on
// this host is reached when this host's own address is among the peers too).
inline std::vector<std::string> endpoints_to_connect(const Settings &s, const std::string &topic) {
  if (s.local_address.empty() || s.transport != Transport::tcp) return {endpoint_for(s, topic)};
  std::vector<std::string> all;
  for (const std::string &peer : s.peer_addresses)
    all.push_back("tcp://" + peer + ":" + std::to_string(tcp_port(s, topic)));
  return all;
}

// The longest topic suffix check() makes room for in an ipc path ("ping", "pong" and
// "data" are what the node uses).
constexpr size_t kIpcSuffixRoom = 8;

// QoS. The node refuses what caps leave out; these say why to a direct caller too.
inline void parse_qos(const psb_config &cfg, psb::sdk::Refusals &refuse, Settings &s) {
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

// Records every refusal (check() and open(), which throws them).
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.transport = Transport(psb::sdk::transport_index(cfg, kTransportNames));  // "default": tcp
  if (s.transport == Transport::inproc && !cfg.intra_process)
    refuse.add("placement",
               "transport 'inproc' only connects sockets of one process, and "
               "this run's peers are other processes; use --placement intra, or "
               "transport ipc or tcp");
  s.keep(cfg, refuse, "endpoints are named from it");
  // Across hosts tcp connects to the peers. Not IPv4, or ipc and inproc: refused by the SDK
  // (RunSettings::keep, host_transports).
  if (s.transport == Transport::tcp) s.need_peers(refuse, "transport tcp across hosts connects to");
  parse_qos(cfg, refuse, s);

  const psb::sdk::Options options(cfg, refuse);
  const std::string hwm_hint = "a number of messages from 0 to " + std::to_string(INT_MAX) +
                               " (0 = no limit, ZeroMQ's default is " +
                               std::to_string(kDefaultHwm) + ")";
  s.sndhwm = int(options.number("sndhwm", kDefaultHwm, 0, INT_MAX, hwm_hint));
  s.rcvhwm = int(options.number("rcvhwm", kDefaultHwm, 0, INT_MAX, hwm_hint));
  options.given_but("rcvhwm", s.conflate,
                    "does not apply with history keep_last:1: ZMQ_CONFLATE keeps one message "
                    "in the subscriber's queue and ignores the high-water mark");

  if (!options.given_but("port_base", s.transport != Transport::tcp,
                         "applies to transport tcp only (this run uses %s)",
                         kTransportNames[int(s.transport)]))
    s.port_base =
        unsigned(options.number("port_base", kDefaultPortBase, 1024, 65535 - kPortSpan,
                                "a number from 1024 to " + std::to_string(65535 - kPortSpan) +
                                    " (the run's ports lie in port_base .. port_base+" +
                                    std::to_string(kPortSpan - 1) + ")"));

  if (s.transport == Transport::tcp && s.run_topics.size() > kPortSpan)
    refuse.add("driver",
               "the run has %zu topics, and transport tcp has %u ports for a run (one each); "
               "use --transport ipc",
               s.run_topics.size(), kPortSpan);

  if (s.transport == Transport::ipc) {
    // The socket file's path must fit sockaddr_un.sun_path with its terminating NUL: the
    // longest of the run's topics when it lists them, else room for the node's suffixes.
    size_t topic =
        s.run_topics.empty() ? std::strlen("psb__") + s.run_id.size() + kIpcSuffixRoom : 0;
    for (const std::string &t : s.run_topics) topic = std::max(topic, t.size());
    size_t longest = ipc_directory(s.run_id).size() + 1 + topic;
    if (longest >= sizeof(sockaddr_un{}.sun_path))
      refuse.add("driver",
                 "run id '%s' is too long for transport ipc: its socket paths (%zu "
                 "characters) would not fit the %zu of a Unix socket address; use a shorter "
                 "--run-id%s",
                 s.run_id.c_str(), longest, sizeof(sockaddr_un{}.sun_path) - 1,
                 s.run_topics.empty() ? "" : " or shorter topic names");
  }
  return s;
}

}  // namespace psbzmq
