// Bare libzmq ping-pong: ping binds an XPUB on PORT_A and connects a SUB to PORT_B; pong
// the reverse. Each side waits until its XPUB has seen the peer's subscription (the
// slow-joiner guard, as the driver's matching does), then ping sends SIZE-byte messages
// closed-loop for SECONDS and prints "p50_us p99_us count" of the measured round trips
// (nearest rank). Usage: zeromq_probe ping|pong PORT_A PORT_B SIZE SECONDS
//
// pub/sub, maximum throughput: pub binds an XPUB on PORT with the driver's defaults
// (ZMQ_SNDHWM 1000, libzmq's own; an XPUB never blocks, so what does not fit under the
// high-water mark is dropped, as by the driver's writer), waits for sub's subscription,
// sends SIZE-byte messages back to back for SECONDS, then empty end markers. sub connects
// a SUB (ZMQ_RCVHWM 1000), counts messages until an end marker or 2 s without one, and
// prints "sub: received N, R samples/s", R = (N - 1) / (last - first arrival) on its own
// clock. Usage: zeromq_probe sub|pub PORT SIZE SECONDS (sub first)
#include <zmq.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "rtt.hpp"  // bench/probes/common

static void die(const char* what) {
  std::fprintf(stderr, "zeromq_probe: %s: %s\n", what, zmq_strerror(zmq_errno()));
  std::exit(1);
}

using clk = std::chrono::steady_clock;

static int pub(void* ctx, const std::string& ep, size_t size, double seconds) {
  void* out = zmq_socket(ctx, ZMQ_XPUB);
  int linger_ms = 2000;  // the end markers leave before the socket closes
  zmq_setsockopt(out, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
  int wait_ms = 20000;
  zmq_setsockopt(out, ZMQ_RCVTIMEO, &wait_ms, sizeof wait_ms);
  if (zmq_bind(out, ep.c_str()) != 0) die("bind");
  char sub[64];
  if (zmq_recv(out, sub, sizeof sub, 0) < 0) die("waiting for the subscription");
  std::vector<char> msg(size, 'x');
  unsigned long long sent = 0;
  const auto end = clk::now() + std::chrono::duration<double>(seconds);
  while (clk::now() < end) {
    if (zmq_send(out, msg.data(), size, ZMQ_DONTWAIT) < 0 && zmq_errno() != EAGAIN) die("send");
    ++sent;
  }
  for (int i = 0; i < 20 && zmq_send(out, "", 0, ZMQ_DONTWAIT) >= 0; ++i) {
    struct timespec ms10 = {0, 10000000};
    nanosleep(&ms10, nullptr);  // best effort: repeated, in case the queue is full
  }
  std::printf("pub: sent %llu\n", sent);
  zmq_close(out);
  return 0;
}

static int sub(void* ctx, const std::string& ep) {
  void* in = zmq_socket(ctx, ZMQ_SUB);
  int zero = 0, first_ms = 20000, idle_ms = 2000;
  zmq_setsockopt(in, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(in, ZMQ_RCVTIMEO, &first_ms, sizeof first_ms);
  if (zmq_setsockopt(in, ZMQ_SUBSCRIBE, "", 0) != 0) die("subscribe");
  if (zmq_connect(in, ep.c_str()) != 0) die("connect");
  zmq_msg_t m;
  zmq_msg_init(&m);
  unsigned long long received = 0;
  clk::time_point first{}, last{};
  while (zmq_msg_recv(&m, in, 0) >= 0 && zmq_msg_size(&m) > 0) {
    last = clk::now();
    if (received++ == 0) {
      first = last;
      zmq_setsockopt(in, ZMQ_RCVTIMEO, &idle_ms, sizeof idle_ms);
    }
  }
  const double span = std::chrono::duration<double>(last - first).count();
  std::printf("sub: received %llu, %.0f samples/s\n", received,
              span > 0 ? (received - 1) / span : 0.0);
  zmq_msg_close(&m);
  zmq_close(in);
  return received > 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 5 && (std::strcmp(argv[1], "pub") == 0 || std::strcmp(argv[1], "sub") == 0)) {
    void* ctx = zmq_ctx_new();
    const std::string ep = std::string("tcp://127.0.0.1:") + argv[2];
    const int rc = argv[1][0] == 'p' ? pub(ctx, ep, std::strtoul(argv[3], nullptr, 10),
                                           std::strtod(argv[4], nullptr))
                                     : sub(ctx, ep);
    zmq_ctx_term(ctx);
    return rc;
  }
  if (argc != 6) {
    std::fprintf(
        stderr,
        "usage: zeromq_probe ping|pong PORT_A PORT_B SIZE SECONDS | pub|sub PORT SIZE SECONDS\n");
    return 2;
  }
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const std::string a = std::string("tcp://127.0.0.1:") + argv[2],
                    b = std::string("tcp://127.0.0.1:") + argv[3];
  const size_t size = std::strtoul(argv[4], nullptr, 10);
  const double seconds = std::strtod(argv[5], nullptr);
  void* ctx = zmq_ctx_new();
  void* out = zmq_socket(ctx, ZMQ_XPUB);
  void* in = zmq_socket(ctx, ZMQ_SUB);
  int zero = 0;
  zmq_setsockopt(out, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(in, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_bind(out, (ping ? a : b).c_str()) != 0) die("bind");
  if (zmq_setsockopt(in, ZMQ_SUBSCRIBE, "", 0) != 0) die("subscribe");
  if (zmq_connect(in, (ping ? b : a).c_str()) != 0) die("connect");
  char sub[64];
  if (zmq_recv(out, sub, sizeof sub, 0) < 0) die("waiting for the peer's subscription");
  std::vector<char> msg(size, 'x');
  zmq_msg_t m;
  zmq_msg_init(&m);
  if (!ping) {
    // Pong echoes until it receives an empty message.
    for (;;) {
      if (zmq_msg_recv(&m, in, 0) < 0) die("recv");
      if (zmq_msg_size(&m) == 0) break;
      if (zmq_send(out, msg.data(), size, 0) < 0) die("send");
    }
  } else {
    // Ping's SUB must also be connected before the first message: retry the first one.
    int timeout_ms = 100;
    zmq_setsockopt(in, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    for (;;) {
      if (zmq_send(out, msg.data(), size, 0) < 0) die("send");
      if (zmq_msg_recv(&m, in, 0) >= 0) break;
    }
    int forever = -1;
    zmq_setsockopt(in, ZMQ_RCVTIMEO, &forever, sizeof forever);
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      if (zmq_send(out, msg.data(), size, 0) < 0) die("send");
      if (zmq_msg_recv(&m, in, 0) < 0) die("recv");
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
    }
    zmq_send(out, "", 0, 0);
    probe::print_rtt_line(rtt);  // common/rtt.hpp
  }
  zmq_msg_close(&m);
  zmq_close(in);
  zmq_close(out);
  zmq_ctx_term(ctx);
  return 0;
}
