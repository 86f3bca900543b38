// sub: takes messages from --publishers writers and records one-way latency from the
// intended send time, one sample store per writer. With --echo-every N it also writes
// every Nth measured message of writer 0 back on the echo topic, byte for byte.
#include <stdexcept>

#include "message.hpp"
#include "progress_reporter.hpp"
#include "receive_loop.hpp"
#include "role.hpp"

namespace psb {
namespace {

// What the sub knows of one writer.
struct WriterState {
  SampleStore *store = nullptr;
  uint64_t peer_sent = 0;  // its end marker's seq: the measured messages it sent
  bool end_seen = false;
};

struct SubSink {
  SubSink(const RoleEnv &e, RoleResult &r) : env(e), node(e.node), res(r), counts(r.counts) {
    for (auto &s : res.stores) writers.push_back(WriterState{s.get()});
  }

  void on_message(const void *data, size_t len, int64_t t) {
    if (res.first_receive_ns == 0) res.first_receive_ns = t;
    if (len < kHeaderSize) {
      ++counts.corrupted;
      return;
    }
    MessageHeader h = read_header(data);
    const bool measured = !(h.flags & (kFlagEnd | kFlagHandshake | kFlagWarmup));
    if (h.writer_id >= writers.size()) {  // not a writer of this run
      if (measured) {
        ++counts.received;
        ++counts.corrupted;
      }
      return;
    }
    WriterState &w = writers[h.writer_id];
    if (h.flags & kFlagEnd) {
      if (!w.end_seen) {
        w.end_seen = true;
        w.peer_sent = h.seq;
        if (ends.fetch_add(1, std::memory_order_acq_rel) + 1 == writers.size())
          all_ended.store(true, std::memory_order_release);
      }
      return;
    }
    if (h.flags & kFlagHandshake) return;
    if (h.flags & kFlagWarmup) {
      ++counts.warmup;
      return;
    }
    ++counts.received;
    if (len != node.size || (node.check_pattern && !check_pattern(data, len, h.seq))) {
      ++counts.corrupted;
      return;
    }
    // The latency's time base: the schedule, or the write's start (--latency-from send).
    const int64_t from = node.latency_from_send ? h.send_ns : h.intended_ns;
    auto out =
        w.store->record(SampleRecord{h.seq, h.intended_ns, t - from, h.send_ns, 0, h.writer_id});
    if (out == SampleStore::Outcome::duplicate) return;
    res.throughput.add(t, len);
    if (echo_writer && h.writer_id == 0 && h.seq % node.echo_every == 0) echo(data, len);
    if (node.count && w.store->distinct() == *node.count &&
        complete.fetch_add(1, std::memory_order_acq_rel) + 1 == writers.size())
      all_in.store(true, std::memory_order_release);
  }

  void echo(const void *data, size_t len) {
    psb_error err;
    // The publisher times the echo: nothing may stay in a write batch.
    if (write_now(env.driver, echo_writer, data, len, &err) != 0) {
      if (res.echo.write_errors++ == 0) first_echo_error = err.message;
    } else {
      ++res.echo.sent;
    }
  }

  bool done() const {
    return all_ended.load(std::memory_order_acquire) || all_in.load(std::memory_order_acquire);
  }
  const char *done_reason() const {
    return all_ended.load(std::memory_order_acquire) ? "end_marker" : "count";
  }

  const RoleEnv &env;
  const NodeConfig &node;
  RoleResult &res;
  RoleCounts &counts;
  std::vector<WriterState> writers;
  psb_writer *echo_writer = nullptr;
  std::string first_echo_error;
  std::atomic<size_t> ends{0}, complete{0};
  std::atomic<bool> all_ended{false}, all_in{false};
  ArrivalSignal signal;
};

// What a late joiner got of the time before it joined: records whose write began before
// its reader existed can only have come from a writer's (or broker's) history. After the
// run, off the timed path.
void late_join_history(RoleResult &res) {
  for (auto &store : res.stores)
    for (const SampleRecord *r = store->begin(); r != store->end(); ++r) {
      if (r->send_ns < res.joined_ns) {
        if (res.history == 0 || r->seq < res.history_first_seq) res.history_first_seq = r->seq;
        if (res.history == 0 || r->seq > res.history_last_seq) res.history_last_seq = r->seq;
        ++res.history;
      } else if (!res.any_live || r->seq < res.first_live_seq) {
        res.first_live_seq = r->seq;
        res.any_live = true;
      }
    }
}

}  // namespace

void run_sub(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const NodeConfig &node = env.node;
  res.kind = SampleKind::one_way;
  for (uint32_t w = 0; w < node.publishers; ++w)
    res.stores.push_back(std::make_unique<SampleStore>(node.sample_capacity()));
  res.has_throughput = true;
  res.throughput = ThroughputCounter(node.timeout_s);
  res.topics = {topic_name(node, node.topic)};
  if (node.echo_every) {
    res.topics.push_back(topic_name(node, node.topic + "_echo"));
    res.echo.every = node.echo_every;
  }
  SubSink sink(env, res);
  const int64_t t_open = res.opened_ns = now_ns();
  ep.open(env.cfg);
  if (node.echo_every) {
    ep.create_writer(res.topics[1]);
    sink.echo_writer = ep.writer();
  }
  res.joined_ns = now_ns();
  create_sink_reader(env, ep, res.topics[0], sink);
  // Matching is not symmetric: the writer may see this reader before this reader knows
  // the writer, and what is sent in between is lost. So the reader waits too.
  if (wait_until_matched(env, &Endpoints::matched_writers, ep, int(node.publishers),
                         "publishers")) {
    res.matched_ns = now_ns();
    res.discovery_ns = res.matched_ns - t_open;
  }
  if (node.echo_every)
    wait_until_matched(env, &Endpoints::matched_readers, ep, 1,
                       "echo readers (the pub given --echo-every)");
  if (!arrive_ready(env, res)) return;
  std::vector<const SampleStore *> stores;
  for (auto &store : res.stores) stores.push_back(store.get());
  ProgressReporter progress(stores, node.progress_s);
  progress.start();
  receive_loop(env, ep, sink, res, "pub");
  announce_window(node, "end");
  progress.stop();

  // What each writer sent, its end marker says. Without every end marker the sub does
  // not know (a guess from sequence numbers or --count hides what never arrived): sent
  // and lost stay unknown here, and the orchestrator reconciles with the writers' own
  // counts (docs/node.md, accounting).
  res.end_markers_expected = sink.writers.size();
  uint64_t sent = 0;
  for (auto &w : sink.writers) {
    res.end_markers_seen += w.end_seen;
    sent += w.peer_sent;
  }
  // Every writer's --count arrived: that is what each sent.
  if (sink.all_in.load()) sent = *node.count * sink.writers.size();
  const bool known = res.end_markers_seen == res.end_markers_expected || sink.all_in.load();
  res.sent_known = known;
  res.counts.sent = known ? sent : 0;
  const uint64_t accounted = distinct(res) + res.counts.corrupted;
  res.counts.lost = known && sent > accounted ? sent - accounted : 0;
  res.counts.write_errors = res.echo.write_errors;
  if (node.late_join) late_join_history(res);
  if (res.echo.write_errors)
    res.warning =
        std::to_string(res.echo.write_errors) + " echoes failed; first: " + sink.first_echo_error;
}

}  // namespace psb
