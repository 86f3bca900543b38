#include "summary.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "json_writer.hpp"

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
      .field("spin_send", n.spin_send)
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
      .field("sample_timeout_s", n.sample_timeout_s)
      .field("match_timeout_s", n.match_timeout_s)
      .field("idle_timeout_s", n.idle_timeout_s)
      .field("timeout_s", n.timeout_s)
      .field("max_samples", n.max_samples);
  j.key("roles").begin_array();
  for (Role role : n.roles) j.value(role_name(role));
  j.end_array();
  j.key("topics").begin_array();
  for (auto &t : r.topics) j.value(t);
  j.end_array().end_object();
}

void write_text(const std::string &path, const std::string &text) {
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f || std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() || std::fflush(f.get()))
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_role_outputs(const NodeConfig &n, const LoadedDriver &driver, const DriverConfig &dcfg,
                        const ProcessFacts &facts, const RoleResult &r) {
  const std::string role = role_name(r.role);
  const std::string stem = n.name.empty() ? role : n.name;
  std::string samples_file;
  if (r.store) {
    samples_file = stem + ".samples";
    r.store->write_file(n.out_dir + "/" + samples_file, r.kind, r.measure_start_ns);
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
  j.key("host").begin_object().field("hostname", u.nodename).field("kernel", u.release)
      .field("machine", u.machine).end_object();
  j.key("driver").begin_object().field("name", driver.table().name).field("version", driver.version())
      .field("path", driver.path()).end_object();
  config_fields(j, n, dcfg, r);
  j.key("realtime").begin_object();
  j.key("cpu");
  r.cpu >= 0 ? j.value(r.cpu) : j.null();
  j.field("sched_policy", n.fifo_priority > 0 ? "SCHED_FIFO" : "SCHED_OTHER")
      .field("sched_priority", n.fifo_priority)
      .field("mlockall", facts.mlockall)
      .field("dma_latency", facts.dma_latency)
      .end_object();
  j.key("timing").begin_object().field("clock", "CLOCK_MONOTONIC");
  j.key("discovery_ns");
  r.discovery_ns >= 0 ? j.value(r.discovery_ns) : j.null();
  j.field("measure_start_ns", r.measure_start_ns).field("measure_end_ns", r.measure_end_ns).end_object();
  const RoleCounts &c = r.counts;
  j.key("counts").begin_object()
      .field("sent", c.sent).field("received", c.received)
      .field("samples", r.store ? r.store->recorded() : uint64_t(0))
      .field("lost", c.lost)
      .field("duplicated", r.store ? r.store->duplicated() : uint64_t(0))
      .field("reordered", r.store ? r.store->reordered() : uint64_t(0))
      .field("late", c.late).field("corrupted", c.corrupted)
      .field("warmup", c.warmup).field("write_errors", c.write_errors)
      .end_object();
  j.key("ended_by");
  r.ended_by.empty() ? j.null() : j.value(r.ended_by);
  j.key("samples_file");
  samples_file.empty() ? j.null() : j.value(samples_file);
  j.key("sample_kind");
  r.store ? j.value(r.kind == SampleKind::rtt ? "rtt" : "one_way") : j.null();
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
