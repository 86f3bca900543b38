// Bare librdkafka ping-pong through one Kafka broker: ping produces to TAG_ping and
// consumes TAG_pong; pong the reverse. Settings as the kafka driver's defaults: acks=0,
// linger.ms=0, Nagle off, topics of 1 partition created through the admin API, a consumer
// assigned partition 0 at its high watermark (no group join), fetch.wait.max.ms=10,
// rd_kafka_consumer_poll with a timeout. Ping repeats its first message until pong
// answers, then sends SIZE-byte messages closed-loop for SECONDS and prints
// "p50_us p99_us count" (nearest rank); an empty message ends pong.
// Usage: kafka_probe ping|pong BROKER TAG SIZE SECONDS
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rtt.hpp"  // bench/probes/common

using clk = std::chrono::steady_clock;

[[noreturn]] static void die(const std::string& what) {
  std::fprintf(stderr, "kafka_probe: %s\n", what.c_str());
  std::exit(1);
}

static rd_kafka_t* client(rd_kafka_type_t type, const char* broker,
                          std::vector<std::pair<const char*, std::string>> props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  props.insert(props.begin(), {{"bootstrap.servers", broker}, {"socket.nagle.disable", "true"}});
  for (auto& [k, v] : props)
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
      die(std::string(k) + ": " + err);
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) die(err);
  return rk;
}

static void create_topic(rd_kafka_t* rk, const std::string& topic) {
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), 1, 1, err, sizeof err);
  if (!nt) die(err);
  rd_kafka_NewTopic_set_config(nt, "max.message.bytes", "4195328");
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 15000);
  if (!ev) die("create topic: no answer");
  size_t n = 0;
  const rd_kafka_topic_result_t** r =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  const rd_kafka_resp_err_t e =
      n == 1 ? rd_kafka_topic_result_error(r[0]) : RD_KAFKA_RESP_ERR__FAIL;
  if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    die(std::string("create topic: ") + rd_kafka_err2str(e));
  rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
}

static void assign_at_end(rd_kafka_t* rk, const std::string& topic) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t e;
  for (int i = 0; (e = rd_kafka_query_watermark_offsets(rk, topic.c_str(), 0, &low, &high, 5000));
       ++i) {
    if (i == 300) die(std::string("watermark: ") + rd_kafka_err2str(e));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  rd_kafka_topic_partition_list_t* l = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(l, topic.c_str(), 0)->offset = high;
  if (rd_kafka_assign(rk, l)) die("assign");
  rd_kafka_topic_partition_list_destroy(l);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: kafka_probe ping|pong BROKER TAG SIZE SECONDS\n");
    return 2;
  }
  const bool ping = std::strcmp(argv[1], "ping") == 0;
  const char* broker = argv[2];
  const std::string tag = argv[3];
  const std::string out = tag + (ping ? "_ping" : "_pong"), in = tag + (ping ? "_pong" : "_ping");
  const int size = std::atoi(argv[4]);
  const double seconds = std::strtod(argv[5], nullptr);

  rd_kafka_t* prod = client(RD_KAFKA_PRODUCER, broker,
                            {{"acks", "0"},
                             {"linger.ms", "0"},
                             {"batch.num.messages", "1"},
                             {"message.max.bytes", "4195328"}});
  rd_kafka_t* cons = client(RD_KAFKA_CONSUMER, broker,
                            {{"group.id", "probe-" + tag + (ping ? "-ping" : "-pong")},
                             {"enable.auto.commit", "false"},
                             {"fetch.wait.max.ms", "10"},
                             {"fetch.min.bytes", "1"},
                             {"max.partition.fetch.bytes", "4195328"}});
  rd_kafka_poll_set_consumer(cons);
  create_topic(prod, out);
  create_topic(prod, in);
  assign_at_end(cons, in);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(prod, out.c_str(), nullptr);
  std::vector<char> msg(size, 'x');
  auto send = [&](const void* data, size_t len) {
    while (rd_kafka_produce(rkt, 0, RD_KAFKA_MSG_F_COPY, const_cast<void*>(data), len, nullptr, 0,
                            nullptr) != 0)
      rd_kafka_poll(prod, 1);
    rd_kafka_poll(prod, 0);
  };
  auto receive = [&](int timeout_ms) -> long {  // the length, or -1: none
    rd_kafka_message_t* m = rd_kafka_consumer_poll(cons, timeout_ms);
    if (!m) return -1;
    if (m->err) die(std::string("receive: ") + rd_kafka_message_errstr(m));
    const long len = long(m->len);
    rd_kafka_message_destroy(m);
    return len;
  };
  if (!ping) {
    for (;;) {  // echo until an empty message
      const long len = receive(1000);
      if (len == 0) break;
      if (len > 0) send(msg.data(), msg.size());
    }
  } else {
    for (int tries = 0;; ++tries) {
      if (tries == 150) die("no pong within 30 s");
      send(msg.data(), msg.size());
      if (receive(200) >= 0) break;
    }
    while (receive(300) >= 0) {  // late echoes of the repeated first message
    }
    std::vector<long long> rtt;
    const auto end = clk::now() + std::chrono::duration<double>(seconds);
    while (clk::now() < end) {
      const auto t0 = clk::now();
      send(msg.data(), msg.size());
      if (receive(10000) < 0) die("no echo within 10 s");
      rtt.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clk::now() - t0).count());
    }
    send("", 0);
    rd_kafka_flush(prod, 5000);
    probe::print_rtt_line(rtt);  // common/rtt.hpp
  }
  rd_kafka_flush(prod, 5000);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_consumer_close(cons);
  rd_kafka_destroy(cons);
  rd_kafka_destroy(prod);
  return 0;
}
