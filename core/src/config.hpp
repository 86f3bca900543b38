// Everything one node invocation is asked to do, parsed from the command line.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "module_args.hpp"

namespace psb {

enum class Role { ping, pong, pub, sub, relay, module };
enum class BarrierKind { none, stdio };
// How an open-loop sender waits for a message's due time (never when already behind):
// sleep, spin, or sleep until send_spin_ns before it and spin the rest (hybrid).
enum class SendWait { sleep, spin, hybrid };
// Where --cpu pins (docs/node.md): role = the role thread only, after its endpoints are
// open, so the middleware's own threads keep the process's CPUs and SCHED_OTHER;
// process = also every other thread of the node confined to the roles' CPUs; none = no
// pinning (--cpu refused).
enum class PinMode { role, process, none };

// A fault the publisher injects into its own stream (test hook, docs/node.md): the
// message seq is dropped (counted as sent, never written), written twice, written
// after seq + 1 (reorder), or written after a pause of delay_ns.
struct Injection {
  enum Kind { drop, dup, reorder, delay } kind;
  uint64_t seq;
  int64_t delay_ns = 0;
};

// A bad argument: the message names the argument and how to fix it (exit code 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NodeConfig {
  std::string driver_path;
  bool describe = false;
  // --check: print every refusal of this configuration and create nothing (--json: as
  // JSON); --check-stdin: the same for each configuration read from stdin.
  bool check = false, json = false, check_stdin = false;
  std::vector<Role> roles;
  std::string out_dir;
  // Stem of this node's output files (<name>.json, <name>.samples); empty: the role.
  // Lets several subscribers of one run write side by side in one --out.
  std::string name;
  std::string run_id;

  // The message size; --role module: the run's largest message (the driver's max_payload).
  uint64_t size = 64;
  bool size_given = false;
  std::optional<uint64_t> count;     // measured samples
  std::optional<double> duration_s;  // or seconds
  std::optional<uint64_t> warmup;    // default depends on role
  double rate_hz = 0;                // 0: closed loop
  SendWait send_wait = SendWait::hybrid;
  int64_t send_spin_ns = 100'000;     // hybrid: spin this long before each due time
  std::vector<Injection> injections;  // pub: sorted by seq

  uint32_t reliability = 0, durability = 0, notify = 0;  // psb_* bits
  uint32_t history = 0, history_depth = 0;               // 0: not set, the driver's default
  std::string transport = "default";
  std::vector<std::pair<std::string, std::string>> options;  // in the order given
  // --address, --peer: the run's hosts (psb_config.local_address, peer_addresses);
  // empty: every role on this host.
  std::string address;
  std::vector<std::string> peers;
  bool loan = false;
  uint32_t subscribers = 1;
  // Writers of the data topic (pub and sub of one run); the sub keeps one store each.
  uint32_t publishers = 1;
  uint32_t writer_id = 0;      // pub: written into every header; 0..publishers-1
  std::string topic = "data";  // pub/sub/relay: psb_<run>_<topic>, echoes on
                               // psb_<run>_<topic>_echo; relay forwards to psb_<run>_<topic>_relay
  bool topic_given = false;
  // --run-topics: the suffixes of every topic of the run, in the one order every process of
  // the run is given (psb_config.run_topics, ABI 8); empty: not given.
  std::vector<std::string> run_topics;
  bool echo_given = false;
  uint64_t echo_every = 0;  // 0: off; N: sub echoes writer 0's seq % N == 0, pub times them
  bool check_pattern = false;
  // ping/pong: pong writes back only the first reply_size bytes (header intact) of what
  // it takes, ping expects min(reply_size, size); 0: the whole message is echoed.
  uint64_t reply_size = 0;
  // sub: a latency counts from the publisher's intended send time (its schedule: a late
  // send counts as late, no coordinated omission) or, with latency_from_send, from the
  // time its write began (what a timestamp taken at write measures, as some papers do).
  bool latency_from_send = false;
  // sub: a late joiner, started while publishing goes on: not counted by pub's
  // --subscribers, it records which of what was written before its reader existed it
  // received (the writer's history, if its durability keeps any).
  bool late_join = false;
  // --role module: one module of an application graph (docs/graphs.md).
  ModuleArgs module;

  std::map<Role, int> cpu;  // role -> CPU
  PinMode pin = PinMode::role;
  int fifo_priority = 0;  // 0: SCHED_OTHER
  bool mlockall = false;
  bool dma_latency = false;

  BarrierKind barrier = BarrierKind::none;
  double sample_timeout_s = 1;
  double match_timeout_s = 30;
  double idle_timeout_s = 5;
  double timeout_s = 600;
  // pub: after the last measured write, wait up to this long for the driver to drain
  // (ABI drain) before the end marker.
  double drain_timeout_s = 10;
  uint64_t max_samples = 2'000'000;
  bool max_samples_given = false;
  // ping, sub: a PROGRESS line on stdout every this many seconds while measuring; 0: none.
  double progress_s = 0;  // bounds a --count run's store too
  // ping, pub: say on stdout when the measurement window begins and ends (WINDOW lines),
  // for the orchestrator to read every process's resources over that window.
  bool window_lines = false;

  bool closed_loop() const { return rate_hz == 0; }
  // Readers and writers of one topic of the run, as the driver is told (a module: the
  // most any of its topics has).
  uint32_t topic_readers() const { return runs(Role::module) ? module.max_readers() : subscribers; }
  uint32_t topic_writers() const { return runs(Role::module) ? module.max_writers() : publishers; }
  bool intra_process() const { return roles.size() > 1; }
  // Warm-up messages of ping and pub (the same default for both): 1000, at most one
  // second's worth at an open-loop rate.
  uint64_t warmup_for(Role r) const;
  bool runs(Role r) const;
  // The suffixes of the topics this node's roles read or write (psb_<run>_<suffix>).
  std::vector<std::string> own_topics() const;
  // The length ping expects of an echo (and pong writes back for a message of size).
  uint64_t reply_length(uint64_t len) const {
    return reply_size && reply_size < len ? reply_size : len;
  }
  // How many samples the store must hold (per writer for sub).
  uint64_t sample_capacity() const;
  // How many echo records pub's store holds: as many as a sample store, so every echo
  // of a run within --max-samples is kept whatever was lost before it.
  uint64_t echo_capacity() const { return echo_every ? sample_capacity() : 0; }
};

NodeConfig parse_args(int argc, const char *const *argv);
const char *usage_text();

const char *role_name(Role r);
const char *reliability_name(uint32_t bit);
const char *durability_name(uint32_t bit);
const char *history_name(uint32_t bit);
const char *notify_name(uint32_t bit);
const char *send_wait_name(SendWait w);
const char *pin_mode_name(PinMode p);

}  // namespace psb
