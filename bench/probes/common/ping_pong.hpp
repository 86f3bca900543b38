// The closed loop of the probes that ping-pong as psbench's ping and pong do: ping repeats
// a first message until pong answers, makes `warmup` unmeasured round trips, then round
// trips for `seconds`, and prints the result line (rtt.hpp); a message with no payload
// ends pong, which echoes it. The middleware is the caller's, behind an Endpoints with:
//   bool take(int64_t timeout_ns, uint64_t &seq, size_t &payload)  false: none in time
//   void write(uint64_t seq, size_t payload, bool echo)  echo: the message taken last
//   void done_with_echo()  ping has read the message taken last
//   size_t payload_size() const  the bytes after the 32-byte header ping sends
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "rtt.hpp"
#include "usage_span.hpp"

namespace probe {

constexpr int64_t kPongSliceNs = 50'000'000;       // psbench-node's receive slice
constexpr int64_t kPingTimeoutNs = 1'000'000'000;  // psbench's --sample-timeout
constexpr uint64_t kHandshakeSeq = 1ull << 30;     // seq of ping's first messages

// The drivers' take (the logic of psbench's take_waiting, written again here): try first
// (unless try_first is false), then wait for the time left and try again when the wait
// says something came, until timeout_ns has passed. try_take() is true when it took a
// message; wait(left_ns) is true when one may have come.
template <class TryTake, class WaitFor>
bool take_waiting(int64_t timeout_ns, bool try_first, TryTake try_take, WaitFor wait) {
  if (try_first && try_take()) return true;
  const int64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const int64_t left = deadline - now_ns();
    if (left <= 0) return false;
    if (wait(left) && try_take()) return true;
  }
}

// How a probe runs the loop: its name in messages, and whether it prints "usage" lines
// (usage_span.hpp) after the result line (ping) or before echoing the end (pong).
struct Loop {
  const char *name;
  bool usage;
};

// Echoes every message; gives up after 10 minutes without one.
template <class Endpoints>
int run_pong(Endpoints &ep, const Loop &loop) {
  int64_t last = now_ns();
  UsageSpan span;  // from ping's first measured message to its end message
  uint64_t measured = 0;
  for (;;) {
    uint64_t seq;
    size_t payload;
    if (!ep.take(kPongSliceNs, seq, payload)) {
      if (now_ns() - last > 600'000'000'000) {
        std::fprintf(stderr, "%s pong: no message for 10 minutes\n", loop.name);
        return 1;
      }
      continue;
    }
    last = now_ns();
    if (payload != 0 && seq < kHandshakeSeq && !span.started()) span.start();
    measured += span.started() && payload != 0;
    // Before the echo ends the run.
    if (payload == 0 && loop.usage) span.print(stdout, "pong", measured);
    ep.write(seq, payload, true);
    if (payload == 0) return 0;
  }
}

template <class Endpoints>
int run_ping(Endpoints &ep, const Loop &loop, double seconds, long warmup) {
  const size_t payload = ep.payload_size();
  auto round_trip = [&](uint64_t seq, int64_t timeout_ns) {
    ep.write(seq, payload, false);
    const int64_t deadline = now_ns() + timeout_ns;
    for (int64_t left = timeout_ns; left > 0; left = deadline - now_ns()) {
      uint64_t got;
      size_t len;
      if (!ep.take(left, got, len)) return false;
      ep.done_with_echo();
      if (got == seq) return true;  // an older echo is skipped
    }
    return false;
  };
  // Until pong answers: waits of 10 ms doubling to 1 s, for at most 20 s.
  int64_t wait_ns = 10'000'000;
  const int64_t give_up = now_ns() + 20'000'000'000;
  for (uint64_t i = 0; !round_trip(kHandshakeSeq + i, wait_ns);
       ++i, wait_ns = std::min<int64_t>(2 * wait_ns, 1'000'000'000)) {
    if (now_ns() > give_up) {
      std::fprintf(stderr, "%s ping: no echo from pong within 20 s\n", loop.name);
      return 1;
    }
  }
  for (long i = 0; i < warmup; ++i)
    if (!round_trip(2 * kHandshakeSeq + uint64_t(i), kPingTimeoutNs)) {
      std::fprintf(stderr, "%s ping: a warm-up echo did not come within 1 s\n", loop.name);
      return 1;
    }
  std::vector<int64_t> rtt;
  rtt.reserve(size_t(seconds * 100'000) + 16);  // touched before measuring
  std::fill_n(rtt.data(), rtt.capacity(), 0);
  UsageSpan span;
  span.start();
  const int64_t end = now_ns() + int64_t(seconds * 1e9);
  for (uint64_t seq = 0; now_ns() < end; ++seq) {
    const int64_t t0 = now_ns();
    if (!round_trip(seq, kPingTimeoutNs)) {
      std::fprintf(stderr, "%s ping: no echo within 1 s\n", loop.name);
      return 1;
    }
    rtt.push_back(now_ns() - t0);
  }
  const uint64_t measured = rtt.size();
  // The end, echoed: waited for up to 20 ms (bench/truth stops a pong that missed it).
  ep.write(0, 0, false);
  uint64_t got;
  size_t len;
  if (ep.take(20'000'000, got, len)) ep.done_with_echo();
  print_rtt_line(rtt);
  if (loop.usage) span.print(stdout, "ping", measured);
  return 0;
}

// Runs the role a.role names ("ping" or "pong") on an Endpoints built from `a`, destroyed
// before the exit status is returned.
template <class Endpoints, class Args>
int run_role(const Args &a, const Loop &loop) {
  Endpoints ep(a);
  return a.role == "ping" ? run_ping(ep, loop, a.seconds, a.warmup) : run_pong(ep, loop);
}

}  // namespace probe
