#include "summary.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "json_writer.hpp"
#include "module_summary.hpp"

#ifndef PSBENCH_VERSION
#define PSBENCH_VERSION "unknown"
#endif

namespace psb {
namespace {

void usage_fields(JsonWriter &j, const Usage &u, bool with_rss) {
  j.begin_object().field("user_s", u.user_s).field("sys_s", u.sys_s);
  if (with_rss) j.field("max_rss_kb", u.max_rss_kb);
  j.field("voluntary_ctx_switches", u.voluntary_ctx_switches)
      .field("involuntary_ctx_switches", u.involuntary_ctx_switches)
      .end_object();
}

void config_fields(JsonWriter &j, const NodeConfig &n, const DriverConfig &d, const RoleResult &r) {
  j.key("config").begin_object().field("run_id", n.run_id).field("size", n.size);
  j.key("count");
  n.count ? j.value(*n.count) : j.null();
  j.key("duration_s");
  n.duration_s ? j.value(*n.duration_s) : j.null();
  j.field("warmup", n.warmup_for(r.role))
      .field("mode", n.closed_loop() ? "closed_loop" : "open_loop")
      .field("rate_hz", n.rate_hz)
      .field("send_wait", send_wait_name(n.send_wait))
      .field("send_spin_us", double(n.send_spin_ns) / 1e3)
      .field("reliability", reliability_name(n.reliability))
      .field("durability", durability_name(n.durability))
      .field("history", history_name(n.history))
      .field("history_depth", n.history_depth)
      .field("transport", d.transport())
      .field("notify", notify_name(n.notify));
  j.key("options").begin_object();
  for (auto &[k, v] : n.options) j.field(k, v);
  j.end_object();
  j.field("loan", n.loan)
      .field("check_pattern", n.check_pattern)
      .field("subscribers", n.subscribers)
      .field("publishers", n.publishers)
      .field("writer_id", n.writer_id)
      .field("topic", n.topic);
  j.key("echo_every");
  n.echo_every ? j.value(n.echo_every) : j.null();
  j.key("reply_size");
  n.reply_size ? j.value(n.reply_size) : j.null();
  j.field("latency_from", n.latency_from_send ? "send" : "intended");
  j.key("address");
  n.address.empty() ? j.null() : j.value(n.address);
  j.key("peers").begin_array();
  for (const std::string &p : n.peers) j.value(p);
  j.end_array();
  j.field("sample_timeout_s", n.sample_timeout_s)
      .field("match_timeout_s", n.match_timeout_s)
      .field("idle_timeout_s", n.idle_timeout_s)
      .field("timeout_s", n.timeout_s)
      .field("drain_timeout_s", n.drain_timeout_s)
      .field("max_samples", n.max_samples);
  j.key("inject").begin_array();
  static constexpr const char *kInjectNames[] = {"drop", "dup", "reorder", "delay"};
  for (auto &in : n.injections) {
    j.begin_object().field("kind", kInjectNames[in.kind]).field("seq", in.seq);
    if (in.kind == Injection::delay) j.field("delay_ns", in.delay_ns);
    j.end_object();
  }
  j.end_array();
  j.key("roles").begin_array();
  for (Role role : n.roles) j.value(role_name(role));
  j.end_array();
  j.key("topics").begin_array();
  for (auto &t : r.topics) j.value(t);
  j.end_array().end_object();
}

void bins(JsonWriter &j, const ThroughputCounter &t) {
  j.field("bin_ns", ThroughputCounter::kBinNs);
  j.key("per_bin").begin_array();
  for (uint64_t b : t.used_bins()) j.value(b);
  j.end_array();
}

void maybe_ns(JsonWriter &j, std::string_view key, const ThroughputCounter &t, int64_t v) {
  j.key(key);
  t.count() ? j.value(v) : j.null();
}

// The throughput block of pub (sent) and sub (received); null for ping and pong.
void throughput_fields(JsonWriter &j, const NodeConfig &n, const RoleResult &r) {
  j.key("throughput");
  if (!r.has_throughput) {
    j.null();
    return;
  }
  const ThroughputCounter &t = r.throughput;
  j.begin_object();
  if (r.role == Role::sub) {
    maybe_ns(j, "first_arrival_ns", t, t.first_ns());
    maybe_ns(j, "last_arrival_ns", t, t.last_ns());
    uint64_t beyond = 0;
    for (auto &st : r.stores) beyond += st->beyond_capacity();
    j.field("received", t.count())
        .field("received_bytes", t.bytes())
        .field("beyond_capacity", beyond);
    bins(j, t);
  } else {
    maybe_ns(j, "first_send_ns", t, t.first_ns());
    maybe_ns(j, "last_send_ns", t, t.last_ns());
    j.field("sent", t.count()).field("sent_bytes", t.bytes());
    bins(j, t);
    j.field("offered_rate_hz", n.rate_hz);
  }
  j.end_object();
}

// Latency under load: pub's echo counts, or the echoing sub's; null when off.
void echo_fields(JsonWriter &j, const RoleResult &r) {
  j.key("echo");
  if (!r.echo.every) {
    j.null();
    return;
  }
  j.begin_object().field("every", r.echo.every);
  if (r.role == Role::pub)
    j.field("expected", r.echo.expected)
        .field("received", r.echo.received)
        .field("lost", r.echo.lost);
  else
    j.field("sent", r.echo.sent).field("write_errors", r.echo.write_errors);
  j.end_object();
}

// How an open-loop sender kept its schedule (ping, pub); null for a closed loop or
// another role.
void schedule_fields(JsonWriter &j, const RoleResult &r) {
  j.key("schedule");
  const ScheduleCounts &s = r.schedule;
  if (!s.open_loop) {
    j.null();
    return;
  }
  j.begin_object()
      .field("period_ns", s.period_ns)
      .field("due", s.due)
      .field("attempted", s.attempted)
      .field("not_sent", s.not_sent())
      .field("behind", s.behind)
      .field("max_lateness_ns", s.max_lateness_ns)
      .end_object();
}

void counter_object(JsonWriter &j, std::string_view key, const MiddlewareCounters &c) {
  j.key(key).begin_object();
  for (auto &[name, value] : c) j.field(name, value);
  j.end_object();
}

// What the store kept: all of it, or (when it filled up) the first part of the run.
void kept_fields(JsonWriter &j, const NodeConfig &n, const RoleResult &r) {
  j.key("kept");
  if (r.stores.empty()) {
    j.null();
    return;
  }
  uint64_t beyond = 0, unchecked = 0;
  int64_t last_arrival = -1;
  for (auto &st : r.stores) {
    beyond += st->beyond_capacity();
    unchecked += st->unchecked();
    if (const SampleRecord *l = st->last(); l && st->beyond_capacity())
      // The latency's base: pub's echoes and --latency-from send count from the write.
      last_arrival = std::max(
          last_arrival, (r.role == Role::pub || n.latency_from_send ? l->send_ns : l->intended_ns) +
                            l->latency_ns);
  }
  j.begin_object().field("beyond_capacity", beyond).field("unchecked_duplicates", unchecked);
  j.key("last_kept_arrival_ns");
  last_arrival >= 0 ? j.value(last_arrival) : j.null();
  j.end_object();
}

void write_text(const std::string &path, const std::string &text) {
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f || std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() ||
      std::fflush(f.get()))
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_role_outputs(const NodeConfig &n, const LoadedDriver &driver, const DriverConfig &dcfg,
                        const ProcessFacts &facts, const RoleResult &r) {
  const std::string role = role_name(r.role);
  const std::string stem = r.role == Role::module ? n.module.name : n.name.empty() ? role : n.name;
  if (r.module)
    write_module_records(n.out_dir, stem, *r.module, *n.module.id, *n.module.sources,
                         r.measure_start_ns);
  std::string samples_file;
  uint64_t samples = 0, duplicated = 0, reordered = 0;
  if (!r.stores.empty()) {
    samples_file = stem + ".samples";
    std::vector<const SampleStore *> stores;
    for (auto &s : r.stores) {
      stores.push_back(s.get());
      samples += s->recorded();
      duplicated += s->duplicated();
      reordered += s->reordered();
    }
    write_samples_file(n.out_dir + "/" + samples_file, r.kind, r.measure_start_ns, stores);
  }
  utsname u{};
  uname(&u);
  JsonWriter j;
  j.begin_object()
      .field("format", "psbench-node-summary/1")
      .field("node_version", PSBENCH_VERSION)
      .field("abi_version", PSB_ABI_VERSION)
      .field("role", role)
      .field("name", stem)
      .field("placement", facts.placement)
      .field("pid", int64_t(getpid()));
  j.key("host")
      .begin_object()
      .field("hostname", u.nodename)
      .field("kernel", u.release)
      .field("machine", u.machine)
      .end_object();
  j.key("driver")
      .begin_object()
      .field("name", driver.table().name)
      .field("version", driver.version())
      .field("path", driver.path())
      .end_object();
  config_fields(j, n, dcfg, r);
  j.key("realtime").begin_object();
  j.key("cpu");
  r.cpu >= 0 ? j.value(r.cpu) : j.null();
  j.field("sched_policy", n.fifo_priority > 0 ? "SCHED_FIFO" : "SCHED_OTHER")
      .field("sched_priority", n.fifo_priority)
      .field("mlockall", facts.mlockall)
      .field("dma_latency", facts.dma_latency)
      .field("pin", pin_mode_name(n.pin))
      .end_object();
  // Every thread of the process when the measurement ended: how the middleware's
  // threads were placed beside the role's (docs/node.md).
  j.key("threads").begin_array();
  for (const ThreadFacts &t : r.threads) {
    j.begin_object()
        .field("tid", t.tid)
        .field("name", t.name)
        .field("role_thread", t.tid == r.role_tid)
        .field("cpus", t.cpus)
        .field("policy", t.policy)
        .field("priority", t.priority)
        .field("cpu_time_ns", t.cpu_time_ns)
        .field("voluntary_switches", t.voluntary_switches)
        .field("involuntary_switches", t.involuntary_switches)
        .end_object();
  }
  j.end_array();
  j.key("timing").begin_object().field("clock", "CLOCK_MONOTONIC");
  j.key("discovery_ns");
  r.discovery_ns >= 0 ? j.value(r.discovery_ns) : j.null();
  j.field("measure_start_ns", r.measure_start_ns).field("measure_end_ns", r.measure_end_ns);
  // What the node cost to start (docs/node.md): from main() to the driver's open, to
  // every peer matched, to the first message of any kind.
  j.field("started_ns", facts.started_ns);
  for (auto [key, value] :
       {std::pair{"opened_ns", r.opened_ns}, std::pair{"matched_ns", r.matched_ns},
        std::pair{"first_receive_ns", r.first_receive_ns}}) {
    j.key(key);
    value ? j.value(value) : j.null();
  }
  j.end_object();
  if (r.role == Role::module) module_fields(j, n);
  if (r.module) module_counts(j, n, *r.module);
  const RoleCounts &c = r.counts;
  // A sub that missed an end marker does not know what was sent (docs/node.md).
  const bool sent_known = r.sent_known;
  if (!r.module) {
    j.key("counts").begin_object().key("sent");
    sent_known ? j.value(c.sent) : j.null();
    j.field("received", c.received).field("samples", samples).key("lost");
    sent_known ? j.value(c.lost) : j.null();
    j.field("duplicated", duplicated)
        .field("reordered", reordered)
        .field("late", c.late)
        .field("corrupted", c.corrupted)
        .field("warmup", c.warmup)
        .field("write_errors", c.write_errors)
        .end_object();
  }
  throughput_fields(j, n, r);
  echo_fields(j, r);
  schedule_fields(j, r);
  kept_fields(j, n, r);
  j.key("late_join");
  if (n.late_join) {
    j.begin_object().field("joined_ns", r.joined_ns).field("history", r.history);
    j.key("history_first_seq");
    r.history ? j.value(r.history_first_seq) : j.null();
    j.key("history_last_seq");
    r.history ? j.value(r.history_last_seq) : j.null();
    j.key("first_live_seq");
    r.any_live ? j.value(r.first_live_seq) : j.null();
    j.end_object();
  } else {
    j.null();
  }
  j.key("end_markers");
  if (r.role == Role::sub)
    j.begin_object()
        .field("expected", r.end_markers_expected)
        .field("seen", r.end_markers_seen)
        .end_object();
  else if (r.role == Role::ping)  // how many the pong's echo let it send
    j.begin_object().field("sent", r.end_markers_sent).end_object();
  else
    j.null();
  j.key("drain").begin_object().field("result", r.drain).field("ns", r.drain_ns).end_object();
  j.key("injected")
      .begin_object()
      .field("drop", r.injected_drop)
      .field("dup", r.injected_dup)
      .field("reorder", r.injected_reorder)
      .field("delay", r.injected_delay)
      .key("delay_window_ns");
  if (r.injected_delay)
    j.begin_array().value(r.delay_began_ns).value(r.delay_ended_ns).end_array();
  else
    j.null();
  j.end_object();
  j.key("middleware_counters").begin_object();
  counter_object(j, "reader", r.reader_counters);
  counter_object(j, "writer", r.writer_counters);
  j.end_object();
  j.key("ended_by");
  r.ended_by.empty() ? j.null() : j.value(r.ended_by);
  j.key("samples_file");
  samples_file.empty() ? j.null() : j.value(samples_file);
  j.key("sample_kind");
  !r.stores.empty() ? j.value(r.kind == SampleKind::rtt ? "rtt" : "one_way") : j.null();
  j.key("usage").begin_object().key("process");
  usage_fields(j, facts.usage, true);
  j.key("thread");
  usage_fields(j, r.thread_usage, false);
  j.end_object();
  j.key("error");
  r.error.empty() ? j.null() : j.value(r.error);
  j.key("warning");
  r.warning.empty() ? j.null() : j.value(r.warning);
  j.field("exit_code", r.exit_code).end_object();
  write_text(n.out_dir + "/" + stem + ".json", j.str() + "\n");
}

}  // namespace psb
