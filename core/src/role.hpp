// What every role shares: its endpoints, the way it receives in the chosen notify
// mode, and the result it leaves behind.
#pragma once
#include <psbench/driver.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "clock.hpp"
#include "config.hpp"
#include "psbench/sdk_futex.hpp"
#include "sample_store.hpp"
#include "schedule.hpp"
#include "thread_facts.hpp"
#include "throughput.hpp"
#include "usage.hpp"

namespace psb {

using sdk::futex_wait;  // the node's futex waits are the SDK's (psbench/sdk_futex.hpp)
using sdk::futex_wake_all;

class StartGate;
struct ModuleResult;

// Set by SIGINT/SIGTERM: roles end early, still writing what they measured.
extern std::atomic<bool> g_interrupted;

// sent: measured writes that succeeded (pub, ping, pong's echoes, relay's forwards);
// sub: what its writers' end markers say they sent (known only when all arrived).
struct RoleCounts {
  uint64_t sent = 0, received = 0, lost = 0, late = 0, corrupted = 0, warmup = 0, write_errors = 0;
};

// The middleware's own counts for one endpoint (ABI counters()), name -> value.
using MiddlewareCounters = std::vector<std::pair<std::string, uint64_t>>;

// Latency under load (--echo-every): pub's view (expected, received, lost) or the
// echoing sub's (sent, write_errors).
struct EchoCounts {
  uint64_t every = 0;                             // 0: off
  uint64_t expected = 0, received = 0, lost = 0;  // pub
  uint64_t sent = 0, write_errors = 0;            // sub
};

struct RoleResult {
  Role role{};
  RoleCounts counts;
  // ping: one; sub: one per writer (0..publishers-1); pub: one with --echo-every (rtt of
  // the echoes); pong, relay: none. Written one after the other into the samples file.
  std::vector<std::unique_ptr<SampleStore>> stores;
  SampleKind kind = SampleKind::rtt;
  // pub: measured writes that succeeded; sub: distinct measured arrivals, corrupted ones
  // and duplicates left out. Empty (no bins) for ping and pong.
  ThroughputCounter throughput;
  bool has_throughput = false;
  EchoCounts echo;
  ScheduleCounts schedule;  // ping, pub: how an open-loop sender kept its schedule
  // pub: the driver's drain before the end marker: "drained", "timeout", "error" or
  // "none" (the driver has no drain), and how long it took.
  std::string drain = "none";
  int64_t drain_ns = 0;
  // pub: faults injected into its stream (--inject), by kind.
  uint64_t injected_drop = 0, injected_dup = 0, injected_reorder = 0, injected_delay = 0;
  // The last injected pause (steady clock, as send_ns): when it began and ended.
  int64_t delay_began_ns = 0, delay_ended_ns = 0;
  // sub: end markers expected (one per writer) and seen; when fewer were seen, counts.sent
  // and counts.lost are unknown here (the orchestrator reconciles with the writers).
  uint64_t end_markers_expected = 0, end_markers_seen = 0;
  uint64_t end_markers_sent = 0;  // ping: 1 when the pong echoed the first
  bool sent_known = true;
  // sub --late-join: when its reader was created, and what of the records was written
  // before that (history the writers kept for it).
  int64_t joined_ns = 0;
  uint64_t history = 0, history_first_seq = 0, history_last_seq = 0, first_live_seq = 0;
  bool any_live = false;
  MiddlewareCounters reader_counters, writer_counters;
  std::vector<std::string> topics;
  // --role module: its record streams and counts (module_records.hpp).
  std::shared_ptr<ModuleResult> module;
  int64_t discovery_ns = -1, measure_start_ns = 0, measure_end_ns = 0;
  // CLOCK_MONOTONIC, 0 = never: before the driver's open, when every peer had matched,
  // and when the first message of any kind (warm-up, handshake) arrived.
  int64_t opened_ns = 0, matched_ns = 0, first_receive_ns = 0;
  std::string ended_by;
  std::string error;    // empty when the role succeeded
  std::string warning;  // e.g. failed writes: the run still counts, the reader should know
  int exit_code = 0;    // 0 ok, 1 failure, 3 timeout
  Usage thread_usage;
  int cpu = -1;
  std::vector<ThreadFacts> threads;  // the process's threads at the end of the measurement
  int role_tid = 0;
  bool arrived_at_gate = false;
};

// Everything a role needs to run.
struct RoleEnv {
  const psb_driver &driver;
  const NodeConfig &node;
  const psb_config &cfg;
  StartGate &gate;
  int64_t deadline_ns;
  uint32_t writer_id;  // pub: --writer-id; other roles: their index in --role, from 1
};

std::string topic_name(const NodeConfig &node, const std::string &suffix);

// --window-lines: "WINDOW begin" (senders, before their first measured write) and
// "WINDOW end" (senders after their last, receivers once their loop ended) on stdout,
// never inside a window. After "begin" the sender waits for the orchestrator's line
// "SAMPLED" (it reads /proc of every process first, so that the reading never competes
// with the measurement), at most kWindowAckTimeoutNs; returns how long it waited.
constexpr int64_t kWindowAckTimeoutNs = 5'000'000'000;
int64_t announce_window(const NodeConfig &node, const char *edge);

// Driver objects owned by one role, destroyed in the safe order (readers first, which
// stops a listener thread before anything it uses goes away). A role has one writer and
// one reader; a module one per output and per input, all in one context.
class Endpoints {
 public:
  explicit Endpoints(const psb_driver &d) : d_(d) {}
  ~Endpoints();
  void open(const psb_config &cfg);  // each throws std::runtime_error with the driver's message
  void create_writer(const std::string &topic);  // adds one: writer(0), writer(1), ...
  void create_reader(const std::string &topic, psb_on_data cb, void *user);
  // Reads the readers' middleware counters (summed by name), then destroys them.
  void destroy_reader();
  const MiddlewareCounters &reader_counters() const { return reader_counters_; }
  // Adds the counters of readers in other contexts (a module's receiver threads).
  void add_reader_counters(const MiddlewareCounters &more);
  MiddlewareCounters writer_counters() const;  // summed by name over the writers
  psb_writer *writer(size_t i = 0) const { return i < writers_.size() ? writers_[i] : nullptr; }
  psb_reader *reader(size_t i = 0) const { return i < readers_.size() ? readers_[i] : nullptr; }
  size_t readers() const { return readers_.size(); }
  int matched_readers() const { return matched_readers_of(0); }
  int matched_writers() const { return matched_writers_of(0); }
  int matched_readers_of(size_t i) const {
    return d_.matched_readers ? d_.matched_readers(writer(i)) : -1;
  }
  int matched_writers_of(size_t i) const {
    return d_.matched_writers ? d_.matched_writers(reader(i)) : -1;
  }

 private:
  const psb_driver &d_;
  psb_context *ctx_ = nullptr;
  std::vector<psb_writer *> writers_;
  std::vector<psb_reader *> readers_;
  MiddlewareCounters reader_counters_;
};

// Receives one message in the wait or poll mode: 1 = got one, 0 = none before
// timeout, -1 = driver error (err filled).
inline int receive(const psb_driver &d, psb_reader *reader, uint32_t notify, int64_t timeout_ns,
                   const void **data, size_t *len, psb_error *err) {
  if (notify == PSB_NOTIFY_WAIT) return d.take(reader, timeout_ns, data, len, err);
  int64_t end = now_ns() + timeout_ns;
  for (;;) {
    int r = d.take(reader, 0, data, len, err);
    if (r != 0 || now_ns() >= end) return r;
  }
}

// Writes one message someone is waiting for (an echo, a relayed message) and flushes
// it out of any write batch. 0 = sent, -1 = error (err filled).
inline int write_now(const psb_driver &d, psb_writer *writer, const void *data, size_t len,
                     psb_error *err) {
  if (d.write(writer, data, len, err) != 0) return -1;
  return d.flush ? d.flush(writer, err) : 0;
}

// Counts arrivals for a thread that waits on a listener: the listener bumps it, the
// waiter sleeps on it with a timeout.
class ArrivalSignal {
 public:
  void notify() {
    arrivals_.fetch_add(1, std::memory_order_seq_cst);
    sdk::wake_if_waiting(&arrivals_, &waiting_);
  }
  uint32_t current() const { return arrivals_.load(std::memory_order_acquire); }
  // Sleeps until the count moves past seen or timeout_ns passes.
  void wait(uint32_t seen, int64_t timeout_ns) {
    sdk::sleep_on(&arrivals_, &waiting_, timeout_ns, [seen](uint32_t now) { return now == seen; });
  }

 private:
  std::atomic<uint32_t> arrivals_{0};
  std::atomic<uint32_t> waiting_{0};  // 1: wait() announced its sleep (sdk::sleep_on)
};

// Setup done: wait at the start gate. False = another role failed, do not measure.
bool arrive_ready(const RoleEnv &env, RoleResult &res);

// Waits until matched() reaches want, or returns false at once when it is -1 (the
// middleware cannot tell). Throws naming what did not match within --match-timeout.
bool wait_until_matched(const RoleEnv &env, int (Endpoints::*matched)() const, const Endpoints &ep,
                        int want, const char *what);
// The same for any count (a module's i-th reader or writer).
template <typename Matched>
bool wait_until_matched(const RoleEnv &env, Matched matched, int want, const std::string &what);

// Interrupted or past the deadline: sets res.ended_by and returns true.
bool run_stopped(const RoleEnv &env, RoleResult &res);
// Whether measured message seq, due at due_ns, should not be sent (count, duration,
// the sample capacity when store_bound, or a stop); sets res.ended_by when it should not.
// pub stores nothing per message, so it is not bound by --max-samples: what its
// subscribers cannot store they count (beyond_capacity).
bool measurement_finished(const RoleEnv &env, RoleResult &res, uint64_t seq, int64_t due_ns,
                          bool store_bound);

// Distinct measured arrivals over the role's stores (kept + beyond capacity).
uint64_t distinct(const RoleResult &res);

// Runs one role to completion in the calling thread; never throws.
RoleResult run_role(Role role, const RoleEnv &env);

// The role bodies, each in its own file.
void run_ping(const RoleEnv &env, RoleResult &res, Endpoints &ep);
void run_pong(const RoleEnv &env, RoleResult &res, Endpoints &ep);
void run_pub(const RoleEnv &env, RoleResult &res, Endpoints &ep);
void run_sub(const RoleEnv &env, RoleResult &res, Endpoints &ep);
void run_relay(const RoleEnv &env, RoleResult &res, Endpoints &ep);
void run_module(const RoleEnv &env, RoleResult &res, Endpoints &ep);

template <typename Matched>
bool wait_until_matched(const RoleEnv &env, Matched matched, int want, const std::string &what) {
  if (matched() < 0) return false;
  const int64_t give_up = now_ns() + seconds_to_ns(env.node.match_timeout_s);
  while (matched() < want) {
    if (now_ns() >= give_up || g_interrupted)
      throw std::runtime_error("only " + std::to_string(matched()) + " of " + std::to_string(want) +
                               " " + what + " matched within " +
                               std::to_string(env.node.match_timeout_s) + " s (match timeout)");
    timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
  return true;
}

}  // namespace psb
