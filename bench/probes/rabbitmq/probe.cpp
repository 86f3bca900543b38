// Bare rabbitmq-c ping-pong through one RabbitMQ broker: ping publishes to the fanout
// exchange TAG.ping and consumes from a queue of its own bound to TAG.pong; pong the
// reverse. Each side has one connection to publish and one to consume (as the driver), no
// publisher confirms and a no-ack consumer (the driver's best effort), messages transient.
// Ping repeats its first message until pong answers, then sends SIZE-byte messages
// closed-loop for SECONDS and prints "p50_us p99_us count" (nearest rank); an empty
// message ends pong. Usage: rabbitmq_probe ping|pong HOST:PORT TAG SIZE SECONDS
#include <amqp.h>
#include <amqp_tcp_socket.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "host_port.hpp"  // bench/probes/common
#include "rtt.hpp"        // bench/probes/common

using clk = std::chrono::steady_clock;

static void die(const char* what, const char* why) {
  std::fprintf(stderr, "rabbitmq_probe: %s: %s\n", what, why);
  std::exit(1);
}

static void check_rpc(amqp_connection_state_t c, const char* what) {
  amqp_rpc_reply_t r = amqp_get_rpc_reply(c);
  if (r.reply_type != AMQP_RESPONSE_NORMAL)
    die(what, r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? amqp_error_string2(r.library_error)
                                                              : "the broker refused");
}

static amqp_connection_state_t connect(const std::string& host, int port) {
  amqp_connection_state_t c = amqp_new_connection();
  amqp_socket_t* s = amqp_tcp_socket_new(c);
  if (s == nullptr) die("socket", "out of memory");
  int status = amqp_socket_open(s, host.c_str(), port);
  if (status != AMQP_STATUS_OK) die("connect", amqp_error_string2(status));
  amqp_rpc_reply_t r =
      amqp_login(c, "/", 0, 131072 * 40, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest");
  if (r.reply_type != AMQP_RESPONSE_NORMAL) die("login", "refused");
  amqp_channel_open(c, 1);
  check_rpc(c, "channel");
  return c;
}

static void declare(amqp_connection_state_t c, const std::string& exchange) {
  amqp_exchange_declare(c, 1, amqp_cstring_bytes(exchange.c_str()), amqp_cstring_bytes("fanout"), 0,
                        0, 0, 0, amqp_empty_table);
  check_rpc(c, "exchange.declare");
}

static void publish(amqp_connection_state_t c, const std::string& exchange, const void* data,
                    size_t len) {
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
  props.delivery_mode = 1;
  int s = amqp_basic_publish(c, 1, amqp_cstring_bytes(exchange.c_str()), amqp_empty_bytes, 0, 0,
                             &props, amqp_bytes_t{len, const_cast<void*>(data)});
  if (s != AMQP_STATUS_OK) die("publish", amqp_error_string2(s));
}

// A message within timeout_ms: its length, or -1 on a timeout.
static long receive(amqp_connection_state_t c, int timeout_ms) {
  amqp_maybe_release_buffers(c);
  amqp_envelope_t env;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  amqp_rpc_reply_t r = amqp_consume_message(c, &env, &tv, 0);
  if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && r.library_error == AMQP_STATUS_TIMEOUT)
    return -1;
  if (r.reply_type != AMQP_RESPONSE_NORMAL) die("consume", "the connection failed");
  long len = long(env.message.body.len);
  amqp_destroy_envelope(&env);
  return len;
}

int main(int argc, char** argv) {
  if (argc != 6 || (std::strcmp(argv[1], "ping") != 0 && std::strcmp(argv[1], "pong") != 0)) {
    std::fprintf(stderr, "usage: rabbitmq_probe ping|pong HOST:PORT TAG SIZE SECONDS\n");
    return 2;
  }
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const std::string broker = argv[2], tag = argv[3];
  probe::HostPort at;
  if (!probe::split_host_port(broker, at)) die("broker", "not HOST:PORT");
  const std::string& host = at.host;
  const int port = at.port;
  const std::string out = tag + (ping ? ".ping" : ".pong"), in = tag + (ping ? ".pong" : ".ping");
  const size_t size = size_t(std::atol(argv[4]));
  const double seconds = std::strtod(argv[5], nullptr);

  amqp_connection_state_t writer = connect(host, port), reader = connect(host, port);
  declare(writer, out);
  declare(reader, in);
  amqp_queue_declare_ok_t* q =
      amqp_queue_declare(reader, 1, amqp_empty_bytes, 0, 0, 1, 1, amqp_empty_table);
  check_rpc(reader, "queue.declare");
  amqp_bytes_t queue = amqp_bytes_malloc_dup(q->queue);
  amqp_queue_bind(reader, 1, queue, amqp_cstring_bytes(in.c_str()), amqp_empty_bytes,
                  amqp_empty_table);
  check_rpc(reader, "queue.bind");
  amqp_basic_consume(reader, 1, queue, amqp_empty_bytes, 0, 1 /* no_ack */, 1, amqp_empty_table);
  check_rpc(reader, "basic.consume");

  std::vector<char> msg(size, 'x');
  int rc = 0;
  if (!ping) {
    for (;;) {  // echo until an empty message (30 s without one: ping is gone)
      long len = receive(reader, 30000);
      if (len <= 0) break;
      publish(writer, out, msg.data(), size);
    }
  } else {
    for (int tries = 0;; ++tries) {  // pong's queue may not be bound yet
      if (tries == 100) die("ping", "no answer within 20 s");
      publish(writer, out, msg.data(), size);
      if (receive(reader, 200) >= 0) break;
    }
    // Late echoes of the repeated first message would pair with the wrong round.
    while (receive(reader, 200) >= 0) {
    }
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      publish(writer, out, msg.data(), size);
      if (receive(reader, 10000) < 0) die("ping", "no echo within 10 s");
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
    }
    publish(writer, out, "", 0);
    if (!probe::print_rtt_line(rtt)) rc = 1;  // common/rtt.hpp
  }
  amqp_bytes_free(queue);
  for (amqp_connection_state_t c : {writer, reader}) {
    amqp_channel_close(c, 1, AMQP_REPLY_SUCCESS);
    amqp_connection_close(c, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(c);
  }
  return rc;
}
