// Bare cnats ping-pong through one nats-server: ping publishes on SUBJ.ping and waits on a
// sync subscription to SUBJ.pong; pong the reverse. Ping repeats its first message until
// pong's subscription answers, then sends SIZE-byte messages closed-loop for SECONDS and
// prints "p50_us p99_us count" (nearest rank). Usage: nats_probe ping|pong URL SUBJ SIZE SECONDS
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static void check(natsStatus s, const char* what) {
  if (s != NATS_OK) {
    std::fprintf(stderr, "nats_probe: %s: %s\n", what, natsStatus_GetText(s));
    std::exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: nats_probe ping|pong URL SUBJECT SIZE SECONDS\n");
    return 2;
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
  check(natsOptions_SetSendAsap(opts, true), "send_asap");  // the driver's default: no flusher delay
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
    using clk = std::chrono::steady_clock;
    for (;;) {
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
      if (natsSubscription_NextMsg(&m, sub, 200) == NATS_OK) break;
    }
    natsMsg_Destroy(m);
    // Late echoes of the repeated first message would pair with the wrong round: drain them.
    while (natsSubscription_NextMsg(&m, sub, 200) == NATS_OK) natsMsg_Destroy(m);
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      check(natsConnection_Publish(nc, out.c_str(), msg.data(), size), "publish");
      check(natsSubscription_NextMsg(&m, sub, 10000), "next");
      natsMsg_Destroy(m);
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
    }
    check(natsConnection_Publish(nc, out.c_str(), "", 0), "publish");
    natsConnection_Flush(nc);
    std::sort(rtt.begin(), rtt.end());
    const size_t n = rtt.size();
    auto rank = [n](size_t pct) { return std::max<size_t>(1, (pct * n + 99) / 100) - 1; };
    std::printf("%.3f %.3f %zu\n", rtt[rank(50)] / 1000.0, rtt[rank(99)] / 1000.0, n);
  }
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  natsOptions_Destroy(opts);
  return 0;
}
