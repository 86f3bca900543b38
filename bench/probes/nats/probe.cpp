// Bare cnats ping-pong through one nats-server: ping publishes on SUBJ.ping and waits on a
// sync subscription to SUBJ.pong; pong the reverse. Ping repeats its first message until
// pong's subscription answers, makes 1000 round trips it does not measure (psbench's
// warm-up), then sends SIZE-byte messages closed-loop for SECONDS and prints "p50_us
// p99_us count" (nearest rank). Usage: nats_probe ping|pong URL SUBJ SIZE SECONDS
//
// pub/sub, maximum throughput (same arguments; sub first): pub repeats a 1-byte hello on
// SUBJ until sub answers on SUBJ.ready (NATS tells a publisher nothing of subscribers),
// then publishes SIZE-byte messages back to back for SECONDS (send_asap, as the driver's
// default; core NATS, best effort: what cnats drops at sub's pending limit is not
// received), then empty end markers. sub counts SIZE-byte messages until an end marker or
// 2 s without a message and prints "sub: received N, R samples/s", R = (N - 1) / (last -
// first arrival) on its own clock.
#include <nats/nats.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rtt.hpp"  // bench/probes/common

static void check(natsStatus s, const char* what) {
  if (s != NATS_OK) {
    std::fprintf(stderr, "nats_probe: %s: %s\n", what, natsStatus_GetText(s));
    std::exit(1);
  }
}

using clk = std::chrono::steady_clock;
constexpr int kWarmup = 1000;  // ping's unmeasured round trips, as psbench's ping

static int pub(natsConnection* nc, const std::string& subj, int size, double seconds) {
  natsSubscription* ready = nullptr;
  check(natsConnection_SubscribeSync(&ready, nc, (subj + ".ready").c_str()), "subscribe");
  check(natsConnection_Flush(nc), "flush");
  natsMsg* m = nullptr;
  for (int tries = 0;; ++tries) {  // at most 100 x 200 ms
    if (tries == 100) {
      std::fprintf(stderr, "nats_probe pub: no subscriber within 20 s\n");
      return 1;
    }
    check(natsConnection_Publish(nc, subj.c_str(), "h", 1), "publish");
    if (natsSubscription_NextMsg(&m, ready, 200) == NATS_OK) break;
  }
  natsMsg_Destroy(m);
  std::vector<char> msg(size, 'x');
  unsigned long long sent = 0;
  const auto end = clk::now() + std::chrono::duration<double>(seconds);
  while (clk::now() < end) {
    check(natsConnection_Publish(nc, subj.c_str(), msg.data(), size), "publish");
    ++sent;
  }
  for (int i = 0; i < 3; ++i) check(natsConnection_Publish(nc, subj.c_str(), "", 0), "publish");
  natsConnection_Flush(nc);
  std::printf("pub: sent %llu\n", sent);
  natsSubscription_Destroy(ready);
  return 0;
}

static int sub(natsConnection* nc, const std::string& subj, int size) {
  natsSubscription* in = nullptr;
  check(natsConnection_SubscribeSync(&in, nc, subj.c_str()), "subscribe");
  check(natsConnection_Flush(nc), "flush");
  unsigned long long received = 0;
  clk::time_point first{}, last{};
  natsMsg* m = nullptr;
  // 20 s for pub to come, then 2 s without a message ends the run.
  while (natsSubscription_NextMsg(&m, in, received ? 2000 : 20000) == NATS_OK) {
    const int len = natsMsg_GetDataLength(m);
    natsMsg_Destroy(m);
    if (len == 0) break;
    if (len != size) {  // pub's hello (repeated until answered)
      check(natsConnection_Publish(nc, (subj + ".ready").c_str(), "r", 1), "publish");
      natsConnection_Flush(nc);
      continue;
    }
    last = clk::now();
    if (received++ == 0) first = last;
  }
  const double span = std::chrono::duration<double>(last - first).count();
  std::printf("sub: received %llu, %.0f samples/s\n", received,
              span > 0 ? (received - 1) / span : 0.0);
  natsSubscription_Destroy(in);
  return received > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: nats_probe ping|pong|pub|sub URL SUBJECT SIZE SECONDS\n");
    return 2;
  }
  if (std::strcmp(argv[1], "pub") == 0 || std::strcmp(argv[1], "sub") == 0) {
    natsConnection* nc = nullptr;
    natsOptions* opts = nullptr;
    check(natsOptions_Create(&opts), "options");
    check(natsOptions_SetURL(opts, argv[2]), "url");
    check(natsOptions_SetSendAsap(opts, true), "send_asap");  // the driver's default
    check(natsConnection_Connect(&nc, opts), "connect");
    const int size = std::atoi(argv[4]);
    const int rc = std::strcmp(argv[1], "pub") == 0
                       ? pub(nc, argv[3], size, std::strtod(argv[5], nullptr))
                       : sub(nc, argv[3], size);  // size > 1: not a hello
    natsConnection_Destroy(nc);
    natsOptions_Destroy(opts);
    return rc;
  }
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const std::string base = argv[3];
  const std::string out = base + (ping ? ".ping" : ".pong"), in = base + (ping ? ".pong" : ".ping");
  const int size = std::atoi(argv[4]);
  const double seconds = std::strtod(argv[5], nullptr);
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  natsOptions* opts = nullptr;
  check(natsOptions_Create(&opts), "options");
  check(natsOptions_SetURL(opts, argv[2]), "url");
  check(natsOptions_SetSendAsap(opts, true),
        "send_asap");  // the driver's default: no flusher delay
  check(natsConnection_Connect(&nc, opts), "connect");
  check(natsConnection_SubscribeSync(&sub, nc, in.c_str()), "subscribe");
  check(natsConnection_Flush(nc), "flush");
  std::vector<char> msg(size, 'x');
  natsMsg* m = nullptr;
  if (!ping) {
    for (;;) {  // echo until an empty message
      check(natsSubscription_NextMsg(&m, sub, 1000000), "next");
      const int len = natsMsg_GetDataLength(m);
      natsMsg_Destroy(m);
      if (len == 0) break;
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
    }
  } else {
    for (;;) {
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
      if (natsSubscription_NextMsg(&m, sub, 200) == NATS_OK) break;
    }
    natsMsg_Destroy(m);
    // Late echoes of the repeated first message would pair with the wrong round: drain them.
    while (natsSubscription_NextMsg(&m, sub, 200) == NATS_OK) natsMsg_Destroy(m);
    // Then kWarmup round trips not measured, as psbench's ping (1000 by default): the
    // 200 ms pause above leaves every thread, the server's too, idle; the first round
    // trips after it are not the steady state psbench measures.
    for (int i = 0; i < kWarmup; ++i) {
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
      check(natsSubscription_NextMsg(&m, sub, 10000), "next");
      natsMsg_Destroy(m);
    }
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
      check(natsSubscription_NextMsg(&m, sub, 10000), "next");
      // Timed before the message is freed: psbench's ping frees it at its next take.
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
      natsMsg_Destroy(m);
    }
    check(natsConnection_Publish(nc, out.c_str(), "", 0), "publish");
    natsConnection_Flush(nc);
    probe::print_rtt_line(rtt);  // common/rtt.hpp
  }
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return 0;
}
