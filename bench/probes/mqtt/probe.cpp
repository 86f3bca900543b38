// Bare libmosquitto ping-pong through one mosquitto broker: ping publishes on TOPIC/ping
// and runs the network loop until TOPIC/pong brings the echo; pong the reverse. As the
// mqtt driver's defaults: MQTT 3.1.1, clean session, TCP_NODELAY, QoS 0, no loop thread
// (wait mode: mosquitto_loop() with a timeout on the caller's thread, publishes written
// from that thread, outside the message callback). Ping repeats its first message until
// pong answers, makes 1000 round trips it does not measure (psbench's warm-up), then
// sends SIZE-byte messages closed-loop for SECONDS and prints "p50_us p99_us count"
// (nearest rank). Usage: mqtt_probe ping|pong HOST:PORT TOPIC SIZE SECONDS
//
// pub/sub, maximum throughput (same arguments; sub first, on TOPIC/data): pub repeats a
// 1-byte hello until sub answers on TOPIC/ready, then publishes SIZE-byte messages back to
// back for SECONDS, QoS 0, running the network loop (mosquitto_loop with timeout 0) after a
// publish when libmosquitto has bytes waiting to go out or 100 ms have passed, as the
// driver's writer; then empty end markers. sub counts SIZE-byte messages until an end
// marker or 2 s without a message and prints "sub: received N, R samples/s",
// R = (N - 1) / (last - first arrival) on its own clock.
#include <mosquitto.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "host_port.hpp"  // bench/probes/common
#include "rtt.hpp"        // bench/probes/common

using clk = std::chrono::steady_clock;
constexpr int kWarmup = 1000;  // ping's unmeasured round trips, as psbench's ping

namespace {

struct State {
  std::string in;
  bool connected = false;
  int connack = -1;
  int suback_mid = -1;
  int received = 0;  // messages on `in` since the last reset
  int last_len = -1;
  // pub/sub: sub's count of SIZE-byte messages, their first and last arrival, hellos seen
  int size = 0;
  unsigned long long data = 0;
  int hellos = 0;
  bool ended = false;
  clk::time_point first{}, last{};
};

void die(const char *what, int rc) {
  std::fprintf(stderr, "mqtt_probe: %s: %s\n", what,
               rc == MOSQ_ERR_ERRNO ? std::strerror(errno) : mosquitto_strerror(rc));
  std::exit(1);
}

void on_connect(struct mosquitto *, void *p, int rc) {
  auto *s = static_cast<State *>(p);
  s->connack = rc;
  s->connected = true;
}

void on_subscribe(struct mosquitto *, void *p, int mid, int, const int *) {
  static_cast<State *>(p)->suback_mid = mid;
}

void on_message(struct mosquitto *, void *p, const struct mosquitto_message *m) {
  auto *s = static_cast<State *>(p);
  if (s->in != m->topic) return;
  if (s->size > 0) {  // sub of pub/sub
    if (m->payloadlen == s->size) {
      s->last = clk::now();
      if (s->data++ == 0) s->first = s->last;
    } else if (m->payloadlen == 0) {
      s->ended = true;
    } else {
      ++s->hellos;
    }
    return;
  }
  ++s->received;
  s->last_len = m->payloadlen;
}

// Runs the network loop (timed passes of at most 1 s, as the driver's take()) until
// done() or `ms` milliseconds have passed; false on timeout.
template <typename Done>
bool loop_until(struct mosquitto *mosq, Done done, long ms) {
  const auto end = clk::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    const long left =
        std::chrono::duration_cast<std::chrono::milliseconds>(end - clk::now()).count();
    if (left <= 0) return false;
    const int rc = mosquitto_loop(mosq, int(std::min(left, 1000L)), 1);
    if (rc != MOSQ_ERR_SUCCESS) die("network loop", rc);
  }
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: mqtt_probe ping|pong|pub|sub HOST:PORT TOPIC SIZE SECONDS\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // libmosquitto writes with write(), as psbench-node does
  const std::string role = argv[1];
  const bool ping = role == "ping";
  const std::string broker = argv[2], base = argv[3];
  probe::HostPort at;
  if (!probe::split_host_port(broker, at)) {
    std::fprintf(stderr, "mqtt_probe: broker '%s' is not HOST:PORT\n", argv[2]);
    return 2;
  }
  const std::string &host = at.host;
  const int port = at.port;
  // ping-pong: TOPIC/ping and TOPIC/pong; pub/sub: TOPIC/data, and TOPIC/ready back to pub.
  const bool pub = role == "pub", sub = role == "sub";
  const std::string out = base + (pub ? "/data" : sub ? "/ready" : ping ? "/ping" : "/pong");
  State st;
  st.in = base + (pub ? "/ready" : sub ? "/data" : ping ? "/pong" : "/ping");
  const int size = std::atoi(argv[4]);
  const double seconds = std::strtod(argv[5], nullptr);

  mosquitto_lib_init();
  const std::string id = std::string("mqtt_probe-") + argv[1] + "-" + std::to_string(getpid());
  struct mosquitto *mosq = mosquitto_new(id.c_str(), true, &st);
  if (mosq == nullptr) die("mosquitto_new", MOSQ_ERR_ERRNO);
  mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1);
  mosquitto_connect_callback_set(mosq, on_connect);
  mosquitto_subscribe_callback_set(mosq, on_subscribe);
  mosquitto_message_callback_set(mosq, on_message);
  int rc = mosquitto_connect(mosq, host.c_str(), port, 60);
  if (rc != MOSQ_ERR_SUCCESS) die("connect", rc);
  if (!loop_until(
          mosq, [&] { return st.connected; }, 10000) ||
      st.connack != 0)
    die("CONNACK", MOSQ_ERR_CONN_REFUSED);
  int mid = -1;
  if ((rc = mosquitto_subscribe(mosq, &mid, st.in.c_str(), 0)) != MOSQ_ERR_SUCCESS)
    die("subscribe", rc);
  if (!loop_until(
          mosq, [&] { return st.suback_mid == mid; }, 10000))
    die("SUBACK", MOSQ_ERR_TIMEOUT);

  std::vector<char> msg(size, 'x');
  auto publish = [&](const void *data, int len) {
    const int r = mosquitto_publish(mosq, nullptr, out.c_str(), len, data, 0, false);
    if (r != MOSQ_ERR_SUCCESS) die("publish", r);
  };
  if (role == "sub") {
    st.size = size;
    for (;;) {  // 20 s for pub to come, then 2 s without a message ends the run
      const unsigned long long before = st.data;
      const int hellos = st.hellos;
      if (!loop_until(
              mosq, [&] { return st.ended || st.data != before || st.hellos != hellos; },
              st.data ? 2000 : 20000) ||
          st.ended)
        break;
      if (st.hellos != hellos) publish("r", 1);
    }
    const double span = std::chrono::duration<double>(st.last - st.first).count();
    std::printf("sub: received %llu, %.0f samples/s\n", st.data,
                span > 0 ? (st.data - 1) / span : 0.0);
  } else if (role == "pub") {
    for (int tries = 0;; ++tries) {  // until sub answers (at most 100 x 200 ms)
      if (tries == 100) die("no subscriber within 20 s", MOSQ_ERR_TIMEOUT);
      st.received = 0;
      publish("h", 1);
      if (loop_until(
              mosq, [&] { return st.received > 0; }, 200))
        break;
    }
    unsigned long long sent = 0;
    auto next_service = clk::now();
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    for (auto now = clk::now(); now < end; now = clk::now()) {
      publish(msg.data(), size);
      ++sent;
      if (now < next_service && !mosquitto_want_write(mosq)) continue;
      if ((rc = mosquitto_loop(mosq, 0, 1)) != MOSQ_ERR_SUCCESS) die("network loop", rc);
      next_service = now + std::chrono::milliseconds(100);
    }
    for (int i = 0; i < 3; ++i) publish("", 0);
    loop_until(
        mosq, [&] { return !mosquitto_want_write(mosq); }, 10000);  // all written
    std::printf("pub: sent %llu\n", sent);
  } else if (!ping) {
    for (;;) {  // echo until an empty message; give up after 10 minutes without one
      st.received = 0;
      if (!loop_until(
              mosq, [&] { return st.received > 0; }, 600000))
        die("waiting for ping", MOSQ_ERR_TIMEOUT);
      if (st.last_len == 0) break;
      for (int i = 0; i < st.received; ++i) publish(msg.data(), size);
    }
  } else {
    for (int tries = 0;; ++tries) {  // until pong's subscription answers (at most 50 x 200 ms)
      if (tries == 50) die("no echo from pong within 10 s", MOSQ_ERR_TIMEOUT);
      st.received = 0;
      publish(msg.data(), size);
      if (loop_until(
              mosq, [&] { return st.received > 0; }, 200))
        break;
    }
    // Late echoes of the repeated first message would pair with the wrong round: drain them.
    do st.received = 0;
    while (loop_until(
        mosq, [&] { return st.received > 0; }, 200));
    // Then kWarmup round trips not measured, as psbench's ping (1000 by default): the
    // 200 ms pause above leaves every process, the broker too, idle; the first round
    // trips after it are not the steady state psbench measures.
    for (int i = 0; i < kWarmup; ++i) {
      st.received = 0;
      publish(msg.data(), size);
      if (!loop_until(
              mosq, [&] { return st.received > 0; }, 10000))
        die("no echo within 10 s", MOSQ_ERR_TIMEOUT);
    }
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      st.received = 0;
      const auto t0 = clk::now();
      publish(msg.data(), size);
      if (!loop_until(
              mosq, [&] { return st.received > 0; }, 10000))
        die("no echo within 10 s", MOSQ_ERR_TIMEOUT);
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
    }
    publish("", 0);
    probe::print_rtt_line(rtt);  // common/rtt.hpp
  }
  mosquitto_disconnect(mosq);
  mosquitto_loop(mosq, 100, 1);
  mosquitto_destroy(mosq);
  mosquitto_lib_cleanup();
  return 0;
}
