// Bare hiredis ping-pong through one redis-server: ping PUBLISHes on TOPIC:ping from one
// connection and receives on TOPIC:pong on a second, subscribed connection (a subscribed
// connection cannot PUBLISH); pong the reverse. As the redis driver's defaults: one
// publishing and one subscribing connection per process, TCP (hiredis sets TCP_NODELAY),
// a blocking wait for the next message, and PUBLISH written without waiting for its
// reply (the reply, the receiver count, is read after the round, outside the timed
// part). Ping waits until PUBSUB NUMSUB counts pong's subscription, then sends SIZE-byte
// messages closed-loop for SECONDS and prints "p50_us p99_us count" (nearest rank).
// Usage: redis_probe ping|pong HOST:PORT TOPIC SIZE SECONDS
#include <hiredis/hiredis.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "host_port.hpp"  // bench/probes/common
#include "rtt.hpp"        // bench/probes/common

using clk = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const char *what, const redisContext *c) {
  std::fprintf(stderr, "redis_probe: %s: %s\n", what,
               c != nullptr && c->err ? c->errstr : "unexpected reply");
  std::exit(1);
}

redisContext *connect(const std::string &host, int port) {
  const timeval tv{10, 0};
  redisContext *c = redisConnectWithTimeout(host.c_str(), port, tv);
  if (c == nullptr || c->err) die("connect", c);
  return c;
}

void set_timeout(redisContext *c, long seconds) {
  if (redisSetTimeout(c, timeval{seconds, 0}) != REDIS_OK) die("timeout", c);
}

// Queues PUBLISH and writes it out; the reply is left for read_reply().
void publish(redisContext *c, const std::string &channel, const char *data, size_t len) {
  if (redisAppendCommand(c, "PUBLISH %b %b", channel.data(), channel.size(), data, len) != REDIS_OK)
    die("publish", c);
  int done = 0;
  for (int i = 0; !done; ++i) {
    if (i == 1000 || redisBufferWrite(c, &done) != REDIS_OK) die("publish", c);
  }
}

void read_reply(redisContext *c) {
  void *r = nullptr;
  if (redisGetReply(c, &r) != REDIS_OK) die("PUBLISH reply", c);
  freeReplyObject(r);
}

// The next message on the subscribed connection: its payload length.
size_t next_message(redisContext *sub) {
  for (;;) {
    void *v = nullptr;
    if (redisGetReply(sub, &v) != REDIS_OK) die("receive", sub);
    auto *r = static_cast<redisReply *>(v);
    const bool message = r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
                         r->element[0]->type == REDIS_REPLY_STRING &&
                         std::strcmp(r->element[0]->str, "message") == 0;
    const size_t len = message ? r->element[2]->len : 0;
    freeReplyObject(r);
    if (message) return len;  // anything else (a confirmation) is skipped, as the driver does
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: redis_probe ping|pong HOST:PORT TOPIC SIZE SECONDS\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const std::string broker = argv[2], base = argv[3];
  probe::HostPort at;
  if (!probe::split_host_port(broker, at)) {
    std::fprintf(stderr, "redis_probe: server '%s' is not HOST:PORT\n", argv[2]);
    return 2;
  }
  const std::string &host = at.host;
  const int port = at.port;
  const std::string out = base + (ping ? ":ping" : ":pong"), in = base + (ping ? ":pong" : ":ping");
  const size_t size = std::strtoul(argv[4], nullptr, 10);
  const double seconds = std::strtod(argv[5], nullptr);

  redisContext *pub = connect(host, port), *sub = connect(host, port);
  set_timeout(pub, 10);
  auto *confirm =
      static_cast<redisReply *>(redisCommand(sub, "SUBSCRIBE %b", in.data(), in.size()));
  if (confirm == nullptr) die("subscribe", sub);
  freeReplyObject(confirm);
  std::vector<char> msg(size, 'x');
  if (!ping) {
    set_timeout(sub, 600);  // echo until an empty message; give up after 10 minutes without one
    for (;;) {
      if (next_message(sub) == 0) break;
      publish(pub, out, msg.data(), size);
      read_reply(pub);
    }
  } else {
    // Until the server counts pong's subscription (at most 10 s): from then on every
    // PUBLISH reaches it, so the first message is never lost.
    for (int tries = 0;; ++tries) {
      auto *r =
          static_cast<redisReply *>(redisCommand(pub, "PUBSUB NUMSUB %b", out.data(), out.size()));
      if (r == nullptr) die("PUBSUB NUMSUB", pub);
      const bool there =
          r->type == REDIS_REPLY_ARRAY && r->elements == 2 && r->element[1]->integer >= 1;
      freeReplyObject(r);
      if (there) break;
      if (tries == 1000) die("pong did not subscribe within 10 s", nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    set_timeout(sub, 10);  // a lost echo ends the run with an error, not a hang
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      publish(pub, out, msg.data(), size);
      next_message(sub);
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
      read_reply(pub);
    }
    publish(pub, out, "", 0);
    read_reply(pub);
    probe::print_rtt_line(rtt);  // common/rtt.hpp
  }
  redisFree(sub);
  redisFree(pub);
  return 0;
}
