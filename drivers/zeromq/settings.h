// What a run asks of the zeromq driver, parsed from psb_config once (check and open),
// and the addresses derived from it: where the writer of a topic binds and its readers
// connect.
#pragma once
#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbzmq {

enum class Transport { tcp, ipc, inproc };

constexpr uint64_t kMaxPayload = 4u << 20;  // 4 MiB; libzmq itself has no limit
constexpr int kDefaultHwm = 1000;           // ZeroMQ's own default for both directions
// tcp ports: port_base + kPortsPerRun * (FNV-1a(run id) % kRunBlocks) + slot(topic).
constexpr unsigned kPortsPerRun = 8;
constexpr unsigned kRunBlocks = 1536;
constexpr unsigned kPortSpan = kPortsPerRun * kRunBlocks;  // 12288
// Default range 20000..32287: below Linux's ephemeral range (32768..60999), so no
// outgoing connection ever holds one of these ports, and a connect to a port nobody
// listens on cannot meet itself (TCP self-connect needs an ephemeral port).
constexpr unsigned kDefaultPortBase = 20000;
// Where ipc:// socket files live: <dir>/psbench-zeromq-<run id>/<topic>.
constexpr const char *kIpcParent = "/tmp";

struct Settings {
  Transport transport = Transport::tcp;
  std::string run_id;
  uint32_t notify = PSB_NOTIFY_WAIT;
  int sndhwm = kDefaultHwm, rcvhwm = kDefaultHwm;
  bool rcvhwm_given = false;
  unsigned port_base = kDefaultPortBase;
  bool conflate = false;  // history keep_last:1 -> ZMQ_CONFLATE on the SUB socket
  uint64_t max_payload = 0;
};

// Records every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

const char *transport_name(Transport t);
// tcp only: the port of a topic.
unsigned tcp_port(const Settings &s, const std::string &topic);
// ipc only: the run's private directory and a topic's socket file in it.
std::string ipc_directory(const std::string &run_id);
std::string ipc_path(const Settings &s, const std::string &topic);
// The endpoint the writer binds and the readers connect to, e.g.
// "tcp://127.0.0.1:20417", "ipc:///tmp/psbench-zeromq-R/psb_R_ping", "inproc://psb_R_ping".
std::string endpoint_for(const Settings &s, const std::string &topic);

}  // namespace psbzmq
