// The receiving side of pong and sub: take messages in the chosen notify mode and hand
// them to a sink until it is done, the peer goes quiet, or the run is stopped.
#pragma once
#include <atomic>
#include <stdexcept>
#include <string>

#include "role.hpp"

namespace psb {

// Sink needs: on_message(data, len, recv_ns); bool done() (thread-safe);
// ArrivalSignal signal (bumped by its listener callback); const char *done_reason().
template <typename Sink>
void receive_loop(const RoleEnv &env, Endpoints &ep, Sink &sink, RoleResult &res,
                  const char *peer) {
  const bool listener = env.node.notify == PSB_NOTIFY_LISTENER;
  const int64_t match_timeout = seconds_to_ns(env.node.match_timeout_s);
  const int64_t idle_timeout = seconds_to_ns(env.node.idle_timeout_s);
  const int64_t slice = 50'000'000;  // how often stop conditions are looked at
  int64_t last_arrival = now_ns();
  bool started = false;
  uint32_t last_seen = 0;
  res.measure_start_ns = now_ns();
  for (;;) {
    if (sink.done()) {
      res.ended_by = sink.done_reason();
      break;
    }
    const int64_t now = now_ns();
    if (g_interrupted) {
      res.ended_by = "interrupted";
      break;
    }
    if (now >= env.deadline_ns) {
      res.ended_by = "timeout";
      break;
    }
    const uint32_t seen = sink.signal.current();
    if (seen != last_seen) {
      last_seen = seen;
      last_arrival = now;
      started = true;
    }
    if (!started && now - last_arrival >= match_timeout)
      throw std::runtime_error(std::string("no message from ") + peer + " within " +
                               std::to_string(env.node.match_timeout_s) +
                               " s (match timeout): is a " + peer +
                               " running with the same --run-id, driver and transport?");
    if (started && now - last_arrival >= idle_timeout) {
      res.ended_by = "idle_timeout";
      break;
    }
    if (listener) {
      sink.signal.wait(seen, slice);
      continue;
    }
    const void *data;
    size_t len;
    psb_error err;
    int r = receive(env.driver, ep.reader(), env.node.notify, slice, &data, &len, &err);
    if (r < 0) throw std::runtime_error(std::string("receiving: ") + err.message);
    if (r == 1) {
      sink.on_message(data, len, now_ns());
      if (env.driver.release) env.driver.release(ep.reader());
      last_arrival = now_ns();
      started = true;
    }
  }
  res.measure_end_ns = now_ns();
  ep.destroy_reader();  // stops a listener before the counts are read
}

// The listener callback for any sink: timestamp first, then hand over, then wake the
// role thread.
template <typename Sink>
void listener_trampoline(void *self, const void *data, size_t len) {
  int64_t t = now_ns();
  auto *sink = static_cast<Sink *>(self);
  sink->on_message(data, len, t);
  sink->signal.notify();
}

// The reader on `topic` that feeds `sink`: through its listener in listener mode, else
// taken from by receive_loop.
template <typename Sink>
void create_sink_reader(const RoleEnv &env, Endpoints &ep, const std::string &topic, Sink &sink) {
  const bool listener = env.node.notify == PSB_NOTIFY_LISTENER;
  ep.create_reader(topic, listener ? &listener_trampoline<Sink> : nullptr, &sink);
}

// What the sinks of pong and relay share: the writer they forward on, the end marker
// that ends them (set by the sink that sees it), the first failed write's message.
struct ForwardingSink {
  bool done() const { return ended.load(std::memory_order_acquire); }
  const char *done_reason() const { return "end_marker"; }

  psb_writer *writer = nullptr;
  std::atomic<bool> ended{false};
  ArrivalSignal signal;
  std::string first_error;
};

// pong and relay: opens the endpoints, the sink's writer on `out`, its reader on `in`.
template <typename Sink>
void open_forwarding(const RoleEnv &env, Endpoints &ep, const std::string &in,
                     const std::string &out, Sink &sink) {
  ep.open(env.cfg);
  ep.create_writer(out);
  sink.writer = ep.writer();
  create_sink_reader(env, ep, in, sink);
}

}  // namespace psb
