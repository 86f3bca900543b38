// ping: sends, times the echo. Closed loop (send, await the echo, repeat) or open loop
// (send on a fixed schedule, echoes timed against the intended send time).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "message.hpp"
#include "progress_reporter.hpp"
#include "receive_loop.hpp"
#include "role.hpp"
#include "schedule.hpp"
#include "sender.hpp"

namespace psb {
namespace {

constexpr uint64_t kWarmupTokenBit = 1ull << 63;
constexpr uint64_t kHandshakeTokenBit = 1ull << 62;
constexpr uint64_t kEndTokenBit = 1ull << 61;
constexpr uint64_t kNoToken = ~0ull;

uint64_t token_of(uint64_t seq, uint32_t flags) {
  if (flags & kFlagEnd) return seq | kEndTokenBit;
  if (flags & kFlagHandshake) return seq | kHandshakeTokenBit;
  if (flags & kFlagWarmup) return seq | kWarmupTokenBit;
  return seq;
}

// Handles every echo, on the listener thread or on the thread that takes.
struct PingSink {
  PingSink(const NodeConfig &n, SampleStore &s, RoleCounts &c)
      : node(n), store(s), counts(c), sample_timeout_ns(seconds_to_ns(n.sample_timeout_s)) {}

  void on_message(const void *data, size_t len, int64_t t) {
    if (len < kHeaderSize) {
      ++counts.corrupted;
      return;
    }
    MessageHeader h = read_header(data);
    uint64_t token = token_of(h.seq, h.flags);
    bool awaited_now = token == awaited.load(std::memory_order_acquire);
    if (!(h.flags & (kFlagWarmup | kFlagHandshake | kFlagEnd))) {
      ++counts.received;
      if (len != node.reply_length(node.size) ||
          (node.check_pattern && !check_pattern(data, len, h.seq))) {
        ++counts.corrupted;
      } else {
        // Late: closed loop, no longer awaited (it missed --sample-timeout); open loop,
        // a round trip over --sample-timeout. Kept and flagged, never left out.
        const int64_t rtt = t - h.intended_ns;
        const bool late = node.closed_loop() ? !awaited_now : rtt > sample_timeout_ns;
        store.record(
            SampleRecord{h.seq, h.intended_ns, rtt, h.send_ns, late ? kRecordLate : 0u, 0});
      }
      measured_arrivals.fetch_add(1, std::memory_order_release);
    }
    if (awaited_now) echoed.store(token, std::memory_order_release);
  }

  const NodeConfig &node;
  SampleStore &store;
  RoleCounts &counts;
  const int64_t sample_timeout_ns;
  std::atomic<uint64_t> awaited{kNoToken}, echoed{kNoToken}, measured_arrivals{0};
  ArrivalSignal signal;
};

class Ping {
 public:
  Ping(const RoleEnv &env, RoleResult &res, Endpoints &ep, PingSink &sink)
      : env_(env),
        res_(res),
        ep_(ep),
        sink_(sink),
        sender_(env, ep.writer()),
        listener_(env.node.notify == PSB_NOTIFY_LISTENER) {}

  // False when the run was stopped (timeout, signal) before pong answered.
  bool handshake() {
    const int64_t give_up = now_ns() + seconds_to_ns(env_.node.match_timeout_s);
    RoleCounts scratch;
    // Each attempt waits twice as long as the one before (10 ms to 1 s): a large
    // message through a broker may take longer than 10 ms, and resending it every
    // 10 ms would only pile up copies in front of the echo being waited for.
    int64_t wait_ns = 10'000'000;
    for (uint64_t i = 0;; ++i, wait_ns = std::min<int64_t>(2 * wait_ns, 1'000'000'000)) {
      if (send_and_await(i, kFlagHandshake, wait_ns, scratch)) return true;
      if (stop_now()) return false;
      if (now_ns() >= give_up)
        throw std::runtime_error(
            "no echo from pong within " + std::to_string(env_.node.match_timeout_s) +
            " s (match timeout): is a pong running with the same --run-id, driver and transport?");
    }
  }

  void closed_loop() {
    const uint64_t warmup = env_.node.warmup_for(Role::ping);
    RoleCounts scratch;
    for (uint64_t i = 0; i < warmup && !stop_now(); ++i)
      send_and_await(i, kFlagWarmup, sample_timeout(), scratch);
    res_.counts.warmup = warmup;
    announce_window(env_.node, "begin");
    res_.measure_start_ns = now_ns();
    uint64_t seq = 0;
    for (; !finished(seq, now_ns()); ++seq) send_and_await(seq, 0, sample_timeout(), res_.counts);
    res_.schedule.due = res_.schedule.attempted = seq;
    res_.measure_end_ns = now_ns();
    announce_window(env_.node, "end");
    sink_.awaited.store(kNoToken, std::memory_order_release);
  }

  void open_loop() {
    std::atomic<bool> stop{false};
    std::string rx_error;
    std::thread rx;
    if (!listener_) rx = std::thread([&] { receive_until(stop, rx_error); });
    const uint64_t warmup = env_.node.warmup_for(Role::ping);
    OpenLoopSchedule sched(now_ns() + 1'000'000, env_.node.rate_hz);
    RoleCounts scratch;
    for (uint64_t i = 0; i < warmup && !stop_now(); ++i) {
      int64_t due = sched.due_ns(i);
      wait_until(due, env_.node.send_wait, env_.node.send_spin_ns);
      sender_.send(i, kFlagWarmup, due, scratch);
    }
    res_.counts.warmup = warmup;
    sched.delay(announce_window(env_.node, "begin"));
    res_.measure_start_ns = sched.due_ns(warmup);
    ScheduleCounts &sc = res_.schedule;
    sc.open_loop = true;
    sc.period_ns = sched.period_ns();
    uint64_t seq = 0;
    for (; !finished(seq, sched.due_ns(warmup + seq)); ++seq) {
      int64_t due = sched.due_ns(warmup + seq);
      wait_until(due, env_.node.send_wait, env_.node.send_spin_ns);
      sc.on_write(now_ns() - due);
      if (sender_.send(seq, 0, due, res_.counts) >= 0) ++res_.counts.sent;
    }
    sc.due = env_.node.count ? *env_.node.count
                             : uint64_t(std::ceil(*env_.node.duration_s * env_.node.rate_hz));
    res_.measure_end_ns = now_ns();
    announce_window(env_.node, "end");
    // Give the last echoes up to one sample timeout to come back.
    const int64_t drain_end = now_ns() + sample_timeout();
    while (sink_.measured_arrivals.load(std::memory_order_acquire) < res_.counts.sent &&
           now_ns() < drain_end && !g_interrupted) {
      timespec ts{0, 1'000'000};
      nanosleep(&ts, nullptr);
    }
    stop = true;
    if (rx.joinable()) rx.join();
    if (!rx_error.empty()) throw std::runtime_error(rx_error);
  }

  // The pong echoes the end marker before it ends: once the echo is back, repeating the
  // marker is pointless. One not back within 1, 5 then 20 ms (lost on a best-effort link)
  // is sent again, as a publisher repeats its own; the run never waits on it longer.
  void end() {
    RoleCounts scratch;
    for (int64_t wait_ms : {1, 5, 20}) {
      ++res_.end_markers_sent;
      if (send_and_await(res_.counts.sent, kFlagEnd, wait_ms * 1'000'000, scratch)) return;
    }
  }
  const std::string &write_error() const { return sender_.first_error(); }

 private:
  int64_t sample_timeout() const { return seconds_to_ns(env_.node.sample_timeout_s); }

  bool stop_now() { return run_stopped(env_, res_); }
  bool finished(uint64_t seq, int64_t due_ns) {
    return measurement_finished(env_, res_, seq, due_ns, true);
  }

  // Closed loop: send one message and wait up to timeout_ns for its echo.
  bool send_and_await(uint64_t seq, uint32_t flags, int64_t timeout_ns, RoleCounts &counts) {
    const uint64_t token = token_of(seq, flags);
    sink_.awaited.store(token, std::memory_order_release);
    if (sender_.send(seq, flags, 0, counts) >= 0) ++counts.sent;
    const int64_t deadline = now_ns() + timeout_ns;
    if (listener_) {
      for (;;) {
        uint32_t seen = sink_.signal.current();
        if (sink_.echoed.load(std::memory_order_acquire) == token) return true;
        int64_t left = deadline - now_ns();
        if (left <= 0) return false;
        sink_.signal.wait(seen, left);
      }
    }
    // The first take gets the same timeout every time, so a driver that maps it to a
    // socket option need not change it per sample; only a stray message costs more.
    for (int64_t left = timeout_ns; left > 0; left = deadline - now_ns()) {
      const void *data;
      size_t len;
      psb_error err;
      int r = receive(env_.driver, ep_.reader(), env_.node.notify, left, &data, &len, &err);
      if (r < 0) throw std::runtime_error(std::string("receiving an echo: ") + err.message);
      if (r == 1) {
        int64_t t = now_ns();
        sink_.on_message(data, len, t);
        if (env_.driver.release) env_.driver.release(ep_.reader());
        if (sink_.echoed.load(std::memory_order_relaxed) == token) return true;
      }
    }
    return false;
  }

  // Open loop receive thread (wait and poll modes).
  void receive_until(const std::atomic<bool> &stop, std::string &error) {
    while (!stop.load(std::memory_order_relaxed)) {
      const void *data;
      size_t len;
      psb_error err;
      int r = receive(env_.driver, ep_.reader(), env_.node.notify, 50'000'000, &data, &len, &err);
      if (r == 1) {
        int64_t t = now_ns();
        sink_.on_message(data, len, t);
        if (env_.driver.release) env_.driver.release(ep_.reader());
      } else if (r < 0) {
        error = std::string("receiving an echo: ") + err.message;
        return;
      }
    }
  }

  const RoleEnv &env_;
  RoleResult &res_;
  Endpoints &ep_;
  PingSink &sink_;
  Sender sender_;
  bool listener_;
};

}  // namespace

void run_ping(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const int64_t t_open = now_ns();
  res.kind = SampleKind::rtt;
  res.stores.push_back(std::make_unique<SampleStore>(env.node.sample_capacity()));
  res.topics = {topic_name(env.node, "ping"), topic_name(env.node, "pong")};
  PingSink sink(env.node, *res.stores[0], res.counts);
  res.opened_ns = t_open;
  ep.open(env.cfg);
  ep.create_writer(res.topics[0]);
  create_sink_reader(env, ep, res.topics[1], sink);
  const int64_t setup_ns = now_ns() - t_open;
  if (!arrive_ready(env, res)) return;

  Ping ping(env, res, ep, sink);
  const int64_t t_handshake = now_ns();
  if (!ping.handshake()) return;
  // Ping knows its pong matched when the handshake's echo is back: its first message.
  res.matched_ns = res.first_receive_ns = now_ns();
  res.discovery_ns = setup_ns + (res.matched_ns - t_handshake);
  ProgressReporter progress({res.stores[0].get()}, env.node.progress_s);
  progress.start();
  if (env.node.closed_loop())
    ping.closed_loop();
  else
    ping.open_loop();
  progress.stop();
  ping.end();
  ep.destroy_reader();  // stops a listener before the counts are read
  const SampleStore &store = *res.stores[0];
  res.counts.late = store.late();
  uint64_t accounted = store.distinct() + res.counts.corrupted;
  res.counts.lost = res.counts.sent > accounted ? res.counts.sent - accounted : 0;
  if (res.counts.write_errors)
    res.warning =
        std::to_string(res.counts.write_errors) + " writes failed; first: " + ping.write_error();
}

}  // namespace psb
