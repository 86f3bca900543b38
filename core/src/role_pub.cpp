// pub: writes messages at a fixed rate (open loop) or back to back (--rate 0), after
// waiting until its subscribers are matched. With --echo-every N a second thread, on a
// driver context of its own, takes the echoes of every Nth message from the sub that
// echoes and records their round-trip time (latency under load).
#include <cmath>
#include <stdexcept>
#include <thread>

#include "message.hpp"
#include "receive_loop.hpp"
#include "role.hpp"
#include "schedule.hpp"
#include "sender.hpp"

namespace psb {
namespace {

// Handles every echo, on the driver's listener thread or on the echo receiver thread.
struct EchoSink {
  EchoSink(uint64_t n, uint32_t id, SampleStore &s) : every(n), writer_id(id), store(s) {}

  void on_message(const void *data, size_t len, int64_t t) {
    if (len < kHeaderSize) return;
    MessageHeader h = read_header(data);
    // Only echoes of this pub's own measured messages; anything else is not ours.
    if ((h.flags & (kFlagWarmup | kFlagHandshake | kFlagEnd)) || h.writer_id != writer_id ||
        h.seq % every != 0)
      return;
    // The round trip counts from the write: the echo path has no schedule of its own.
    auto out =
        store.record(SampleRecord{h.seq, h.intended_ns, t - h.send_ns, h.send_ns, 0, h.writer_id});
    if (out == SampleStore::Outcome::duplicate) return;
    arrivals.fetch_add(1, std::memory_order_release);
  }

  const uint64_t every;
  const uint32_t writer_id;
  SampleStore &store;
  std::atomic<uint64_t> arrivals{0};  // distinct echoes
  ArrivalSignal signal;
};

// The echo receiver thread: its own context and reader on the echo topic, in the run's
// notify mode. Setup (open, create the reader, wait for the echoing sub's writer) runs
// before the start barrier; the pub waits for it with wait_ready().
class EchoReceiver {
 public:
  EchoReceiver(const RoleEnv &env, EchoSink &sink, std::string topic)
      : env_(env), sink_(sink), topic_(std::move(topic)) {
    thread_ = std::thread([this] { run(); });
  }
  ~EchoReceiver() { stop(); }

  // True once the reader exists and (when the driver can tell) matched the echo writer;
  // false when setting up failed (error() says why).
  bool wait_ready() {
    for (;;) {
      uint32_t s = state_.load(std::memory_order_acquire);
      if (s != kSettingUp) return s == kReady;
      futex_wait(&state_, s, 100'000'000);
    }
  }
  // Ends taking (a listener is stopped when the reader is destroyed) and joins.
  void stop() {
    if (!thread_.joinable()) return;
    stop_.store(1, std::memory_order_release);
    futex_wake_all(&stop_);
    thread_.join();
  }
  const std::string &error() const { return error_; }  // after stop()

 private:
  enum : uint32_t { kSettingUp, kReady, kFailed };

  void set_state(uint32_t s) {
    state_.store(s, std::memory_order_release);
    futex_wake_all(&state_);
  }

  void run() {
    try {
      Endpoints ep(env_.driver);
      ep.open(env_.cfg);
      const bool listener = env_.node.notify == PSB_NOTIFY_LISTENER;
      create_sink_reader(env_, ep, topic_, sink_);
      wait_until_matched(env_, &Endpoints::matched_writers, ep, 1,
                         "echo writers (the sub given --echo-every)");
      set_state(kReady);
      while (!stop_.load(std::memory_order_acquire)) {
        if (listener) {
          futex_wait(&stop_, 0, 50'000'000);
          continue;
        }
        const void *data;
        size_t len;
        psb_error err;
        int r = receive(env_.driver, ep.reader(), env_.node.notify, 50'000'000, &data, &len, &err);
        if (r < 0) throw std::runtime_error(std::string("receiving an echo: ") + err.message);
        if (r == 1) {
          int64_t t = now_ns();
          sink_.on_message(data, len, t);
          if (env_.driver.release) env_.driver.release(ep.reader());
          sink_.signal.notify();
        }
      }
      ep.destroy_reader();  // stops a listener before the counts are read
    } catch (const std::exception &e) {
      error_ = std::string("echo receiver: ") + e.what();
      if (state_.load() == kSettingUp) {
        set_state(kFailed);
        return;
      }
    }
    if (state_.load() == kSettingUp) set_state(kFailed);
  }

  const RoleEnv &env_;
  EchoSink &sink_;
  std::string topic_;
  std::string error_;
  std::atomic<uint32_t> state_{kSettingUp}, stop_{0};
  std::thread thread_;
};

// Applies --inject faults to the measured stream, in sequence order. A reordered message
// is held back and written right after the next one.
class Injector {
 public:
  Injector(const std::vector<Injection> &list, RoleResult &res, Sender &sender, uint64_t size)
      : list_(list), res_(res), sender_(sender), size_(size) {}

  bool pending(uint64_t seq) const {
    return (next_ < list_.size() && list_[next_].seq == seq) || (held_ && held_seq_ + 1 == seq);
  }

  template <typename SendOne>
  void apply(uint64_t seq, int64_t intended, SendOne &send_one) {
    if (held_ && held_seq_ + 1 == seq) {  // the one a reorder put behind this message
      send_one(seq, intended);
      flush(send_one);
      return;
    }
    const Injection &in = list_[next_++];
    switch (in.kind) {
      case Injection::drop:
        ++res_.counts.sent;
        res_.throughput.add(now_ns(), size_);
        ++res_.injected_drop;
        break;
      case Injection::dup:
        if (send_one(seq, intended) >= 0) {
          RoleCounts scratch;  // the copy is not a message of its own
          sender_.send(seq, 0, intended, scratch);
          ++res_.injected_dup;
        }
        break;
      case Injection::reorder:
        held_ = true;
        held_seq_ = seq;
        held_intended_ = intended;
        ++res_.injected_reorder;
        break;
      case Injection::delay: {
        res_.delay_began_ns = now_ns();
        const int64_t until = res_.delay_began_ns + in.delay_ns;
        while (now_ns() < until) {
        }
        res_.delay_ended_ns = until;
        send_one(seq, intended);
        ++res_.injected_delay;
        break;
      }
    }
  }

  // Writes a message still held back (a reorder of the last message of the run).
  template <typename SendOne>
  void flush(SendOne &send_one) {
    if (!held_) return;
    held_ = false;
    send_one(held_seq_, held_intended_);
  }

 private:
  const std::vector<Injection> &list_;
  RoleResult &res_;
  Sender &sender_;
  uint64_t size_;
  size_t next_ = 0;
  bool held_ = false;
  uint64_t held_seq_ = 0;
  int64_t held_intended_ = 0;
};

// After the last measured write: let the driver send what it still holds (bounded by
// --drain-timeout), so the end marker does not overtake it and closing does not drop it.
void drain(const RoleEnv &env, Endpoints &ep, RoleResult &res) {
  if (!env.driver.drain) return;
  psb_error err{};
  const int64_t t0 = now_ns();
  int r = env.driver.drain(ep.writer(), seconds_to_ns(env.node.drain_timeout_s), &err);
  res.drain_ns = now_ns() - t0;
  res.drain = r == 1 ? "drained" : r == 0 ? "timeout" : "error";
  if (r < 0) res.warning = std::string("draining the writer failed: ") + err.message;
  if (r == 0)
    res.warning = "the writer had not drained after --drain-timeout " +
                  std::to_string(int64_t(env.node.drain_timeout_s * 1000)) +
                  " ms; what it still held may be lost (raise --drain-timeout)";
}

}  // namespace

void run_pub(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const NodeConfig &node = env.node;
  const int64_t t_open = now_ns();
  res.topics = {topic_name(node, node.topic)};
  res.has_throughput = true;
  res.throughput = ThroughputCounter(node.timeout_s);
  std::unique_ptr<EchoSink> echo_sink;
  std::unique_ptr<EchoReceiver> echo;
  if (node.echo_every) {
    res.topics.push_back(topic_name(node, node.topic + "_echo"));
    res.kind = SampleKind::rtt;
    res.echo.every = node.echo_every;
    res.stores.push_back(std::make_unique<SampleStore>(node.echo_capacity()));
    echo_sink = std::make_unique<EchoSink>(node.echo_every, env.writer_id, *res.stores[0]);
    echo = std::make_unique<EchoReceiver>(env, *echo_sink, res.topics[1]);
  }
  res.opened_ns = t_open;
  ep.open(env.cfg);
  ep.create_writer(res.topics[0]);
  if (wait_until_matched(env, &Endpoints::matched_readers, ep, int(node.subscribers),
                         "subscribers")) {
    res.matched_ns = now_ns();
    res.discovery_ns = res.matched_ns - t_open;
  }
  if (echo && !echo->wait_ready()) {
    echo->stop();
    throw std::runtime_error(echo->error());
  }
  if (!arrive_ready(env, res)) return;

  const bool open_loop = !node.closed_loop();
  Sender sender(env, ep.writer(), open_loop);
  const uint64_t warmup = node.warmup_for(Role::pub);
  OpenLoopSchedule sched(now_ns() + 1'000'000, open_loop ? node.rate_hz : 1.0);
  auto due = [&](uint64_t i) { return open_loop ? sched.due_ns(i) : now_ns(); };
  RoleCounts scratch;
  for (uint64_t i = 0; i < warmup && !run_stopped(env, res); ++i) {
    const int64_t t = due(i);
    if (open_loop) wait_until(t, node.send_wait, node.send_spin_ns);
    sender.send(i, kFlagWarmup, open_loop ? t : 0, scratch);
  }
  res.counts.warmup = warmup;
  sched.delay(announce_window(node, "begin"));
  res.measure_start_ns = due(warmup);
  ScheduleCounts &sc = res.schedule;
  sc.open_loop = open_loop;
  sc.period_ns = open_loop ? sched.period_ns() : 0;
  Injector inject(node.injections, res, sender, node.size);
  // One measured message: sent counts successful writes; a dropped one counts as sent
  // (the fault is on the way, as a network's would be) but is never written.
  auto send_one = [&](uint64_t seq, int64_t intended) {
    int64_t t = sender.send(seq, 0, intended, res.counts);
    if (t < 0) return t;
    ++res.counts.sent;
    res.throughput.add(t, node.size);
    return t;
  };
  uint64_t seq = 0;
  for (; !measurement_finished(env, res, seq, due(warmup + seq), false); ++seq) {
    const int64_t d = due(warmup + seq);
    if (open_loop) wait_until(d, node.send_wait, node.send_spin_ns);
    const int64_t intended = open_loop ? d : 0;
    sc.on_write(open_loop ? now_ns() - d : 0);
    if (inject.pending(seq)) {
      inject.apply(seq, intended, send_one);
      continue;
    }
    send_one(seq, intended);
  }
  inject.flush(send_one);
  // Due within the window: all of --count, or what the schedule placed before the end.
  sc.due = node.count  ? *node.count
           : open_loop ? uint64_t(std::ceil(*node.duration_s * node.rate_hz))
                       : sc.attempted;
  res.measure_end_ns = now_ns();
  announce_window(node, "end");
  drain(env, ep, res);
  if (echo) {
    // The last echoes are on their way: wait for them (up to --sample-timeout) before
    // the end markers, which make the sub close its echo writer.
    const uint64_t every = node.echo_every;
    res.echo.expected = (seq + every - 1) / every;
    const int64_t drain_end = now_ns() + seconds_to_ns(node.sample_timeout_s);
    for (;;) {
      uint32_t seen = echo_sink->signal.current();
      if (echo_sink->arrivals.load(std::memory_order_acquire) >= res.echo.expected) break;
      int64_t left = drain_end - now_ns();
      if (left <= 0 || g_interrupted) break;
      echo_sink->signal.wait(seen, std::min<int64_t>(left, 50'000'000));
    }
  }
  send_end_markers(sender, res.counts.sent);
  if (echo) {
    echo->stop();
    res.echo.received = echo_sink->arrivals.load();
    res.echo.lost =
        res.echo.expected > res.echo.received ? res.echo.expected - res.echo.received : 0;
    if (!echo->error().empty()) throw std::runtime_error(echo->error());
  }
  if (res.counts.write_errors)
    res.warning = (res.warning.empty() ? "" : res.warning + "; ") +
                  std::to_string(res.counts.write_errors) +
                  " writes failed; first: " + sender.first_error();
}

}  // namespace psb
