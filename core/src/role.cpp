#include "role.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "realtime.hpp"
#include "start_gate.hpp"
#include "thread_facts.hpp"

namespace psb {

std::atomic<bool> g_interrupted{false};

std::string topic_name(const NodeConfig &node, const std::string &suffix) {
  return "psb_" + node.run_id + "_" + suffix;
}

int64_t announce_window(const NodeConfig &node, const char *edge) {
  if (!node.window_lines) return 0;
  std::printf("WINDOW %s\n", edge);
  std::fflush(stdout);
  if (std::strcmp(edge, "begin") != 0) return 0;
  const int64_t start = now_ns();
  pollfd in{STDIN_FILENO, POLLIN, 0};
  char line[64];
  // Nothing else is buffered on stdin: the barrier's GO came before "begin" was said.
  if (poll(&in, 1, int(kWindowAckTimeoutNs / 1'000'000)) == 1)
    (void)!std::fgets(line, sizeof line, stdin);
  return now_ns() - start;
}

namespace {

[[noreturn]] void fail(const char *what, const psb_error &err) {
  throw std::runtime_error(std::string(what) + ": " +
                           (err.message[0] ? err.message : "failed (driver gave no reason)"));
}

}  // namespace

void Endpoints::open(const psb_config &cfg) {
  psb_error err{};
  ctx_ = d_.open(&cfg, &err);
  if (!ctx_) fail("opening the driver", err);
}

void Endpoints::create_writer(const std::string &topic) {
  psb_error err{};
  psb_writer *w = d_.create_writer(ctx_, topic.c_str(), &err);
  if (!w) fail(("creating a writer on " + topic).c_str(), err);
  writers_.push_back(w);
}

void Endpoints::create_reader(const std::string &topic, psb_on_data cb, void *user) {
  psb_error err{};
  psb_reader *r = d_.create_reader(ctx_, topic.c_str(), cb, user, &err);
  if (!r) fail(("creating a reader on " + topic).c_str(), err);
  readers_.push_back(r);
}

namespace {

// The driver's writer_counters or reader_counters for one endpoint, when it has them.
// Summed by name over several endpoints (a module's), in the order first reported.
template <class Endpoint>
void read_counters(void (*counters)(Endpoint *, psb_put_counter, void *), Endpoint *endpoint,
                   MiddlewareCounters &out) {
  if (!counters || !endpoint) return;
  counters(
      endpoint,
      [](void *user, const char *name, uint64_t value) {
        auto &all = *static_cast<MiddlewareCounters *>(user);
        const std::string key = name ? name : "?";
        for (auto &[k, v] : all)
          if (k == key) {
            v += value;
            return;
          }
        all.emplace_back(key, value);
      },
      &out);
}

}  // namespace

void Endpoints::destroy_reader() {
  for (psb_reader *r : readers_) {
    read_counters(d_.reader_counters, r, reader_counters_);
    d_.destroy_reader(r);
  }
  readers_.clear();
}

void Endpoints::add_reader_counters(const MiddlewareCounters &more) {
  for (const auto &[name, value] : more) {
    bool found = false;
    for (auto &[k, v] : reader_counters_)
      if (k == name) {
        v += value;
        found = true;
      }
    if (!found) reader_counters_.emplace_back(name, value);
  }
}

MiddlewareCounters Endpoints::writer_counters() const {
  MiddlewareCounters out;
  for (psb_writer *w : writers_) read_counters(d_.writer_counters, w, out);
  return out;
}

Endpoints::~Endpoints() {
  destroy_reader();
  for (psb_writer *w : writers_) d_.destroy_writer(w);
  if (ctx_) d_.close(ctx_);
}

// Pins and prioritises the role thread now that its endpoints are open: the threads the
// middleware started while opening them kept the process's CPUs and SCHED_OTHER.
void place_role_thread(const RoleEnv &env, RoleResult &res) {
  if (auto it = env.node.cpu.find(res.role); it != env.node.cpu.end()) {
    pin_current_thread(it->second);
    res.cpu = it->second;
  }
  if (env.node.fifo_priority > 0) set_current_thread_fifo(env.node.fifo_priority);
}

bool arrive_ready(const RoleEnv &env, RoleResult &res) {
  place_role_thread(env, res);
  res.arrived_at_gate = true;
  return env.gate.arrive_and_wait(true);
}

bool wait_until_matched(const RoleEnv &env, int (Endpoints::*matched)() const, const Endpoints &ep,
                        int want, const char *what) {
  if ((ep.*matched)() < 0) return false;
  const int64_t give_up = now_ns() + seconds_to_ns(env.node.match_timeout_s);
  while ((ep.*matched)() < want) {
    if (now_ns() >= give_up || g_interrupted)
      throw std::runtime_error("only " + std::to_string((ep.*matched)()) + " of " +
                               std::to_string(want) + " " + what + " matched within " +
                               std::to_string(env.node.match_timeout_s) + " s (match timeout)");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

bool run_stopped(const RoleEnv &env, RoleResult &res) {
  if (g_interrupted.load(std::memory_order_relaxed)) {
    res.ended_by = "interrupted";
    return true;
  }
  if (now_ns() >= env.deadline_ns) {
    res.ended_by = "timeout";
    return true;
  }
  return false;
}

uint64_t distinct(const RoleResult &res) {
  uint64_t n = 0;
  for (auto &s : res.stores) n += s->distinct();
  return n;
}

bool measurement_finished(const RoleEnv &env, RoleResult &res, uint64_t seq, int64_t due_ns,
                          bool store_bound) {
  const NodeConfig &n = env.node;
  const char *reason = nullptr;
  if (n.count && seq >= *n.count)
    reason = "count";
  else if (n.duration_s &&
           std::max(due_ns, now_ns()) >= res.measure_start_ns + seconds_to_ns(*n.duration_s))
    reason = "duration";  // also when the sender is behind: the window is over
  else if (store_bound && seq >= n.sample_capacity())
    reason = "max_samples";
  if (reason) {
    res.ended_by = reason;
    return true;
  }
  return run_stopped(env, res);
}

namespace {

// The driver's listener met errors it could not return: the samples they cost are counted
// lost, and this says why.
void warn_of_listener_errors(RoleResult &res) {
  for (const auto &[name, value] : res.reader_counters) {
    if (name != PSB_COUNTER_LISTENER_ERRORS || value == 0) continue;
    res.warning = (res.warning.empty() ? "" : res.warning + "; ") + "the driver's listener met " +
                  std::to_string(value) +
                  " error(s) it could not return (the first is on stderr); samples they cost "
                  "count as lost";
  }
}

}  // namespace

RoleResult run_role(Role role, const RoleEnv &env) {
  RoleResult res;
  res.role = role;
  try {
    Endpoints ep(env.driver);
    switch (role) {
      case Role::ping:
        run_ping(env, res, ep);
        break;
      case Role::pong:
        run_pong(env, res, ep);
        break;
      case Role::pub:
        run_pub(env, res, ep);
        break;
      case Role::sub:
        run_sub(env, res, ep);
        break;
      case Role::relay:
        run_relay(env, res, ep);
        break;
      case Role::module:
        run_module(env, res, ep);
        break;
    }
    // Every thread of the process as the measurement ends, the middleware's still alive.
    res.threads = process_threads();
    res.role_tid = current_tid();
    ep.destroy_reader();  // when the role left it: its counters are read first
    res.reader_counters = ep.reader_counters();
    res.writer_counters = ep.writer_counters();
    warn_of_listener_errors(res);
  } catch (const std::exception &e) {
    res.error = e.what();
    res.exit_code = 1;
  }
  if (!res.arrived_at_gate) env.gate.arrive_and_wait(false);
  if (res.ended_by == "timeout" && res.exit_code == 0) res.exit_code = 3;
  res.thread_usage = thread_usage();
  return res;
}

}  // namespace psb
