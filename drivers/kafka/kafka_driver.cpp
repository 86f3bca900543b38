// kafka: Apache Kafka through librdkafka (the C client) and one broker in KRaft mode.
//
// A writer is a producer of its own on partition 0 of the topic; a reader is a consumer
// of its own, assigned partition 0 at the log's end as it was when create_reader asked
// (no consumer group: nothing to join, no rebalance). Topics keep psbench's names
// (psb_<run>_<suffix> is a valid Kafka name as it is) and are created by the driver:
// 1 partition, replication 1, max.message.bytes for the run's largest message. Reliable
// is acks=all with the idempotent producer, best effort acks=0. Durability persistent
// rides out a restart of the broker (its log is on disk): librdkafka reconnects by
// itself, the producer queues what is written meanwhile and sends it then, the consumer
// goes on from its position. The C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER
// at the end). README.md says why each setting.
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "client.h"
#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbkafka {
namespace {

using psb::sdk::fail;

// How long a write waits for room in librdkafka's queue before it fails; while the broker
// is down (durability persistent), at most this long for it to return.
constexpr int64_t kQueueFullTimeoutMs = 10000;
constexpr int64_t kQueueFullWhileDownMs = 1000;
// A reliable message not acknowledged within this time is reported failed; durability
// persistent: as long as psbench waits for a broker to start (manifest ready_timeout_s),
// so that a message written while the broker restarts outlives the restart.
constexpr int kMessageTimeoutMs = 30000;
constexpr int kPersistentMessageTimeoutMs = 60000;
constexpr int kWatermarkTimeoutMs = 5000;
constexpr auto kWatermarkRetryFor = std::chrono::seconds(15);
// destroy_writer: what it still waits for delivery when the node did not drain.
constexpr int kCloseFlushMs = 5000;
constexpr int64_t kListenerPollNs = 100'000'000;

struct Kafka {
  static constexpr const char *name = "kafka";
  static constexpr const char *description =
      "Apache Kafka through librdkafka and one KRaft broker over TCP: a producer "
      "(acks=0 best effort, acks=all idempotent reliable) and a consumer assigned "
      "partition 0 at the log's end per endpoint; producer profile latency (linger.ms=0) "
      "unless option profile=throughput (linger.ms=5, batches); durability persistent "
      "rides out a broker restart (the log is on disk, librdkafka reconnects)";
  static std::string version() { return std::string("librdkafka ") + rd_kafka_version_str(); }
  static constexpr const char *transports[] = {"tcp", nullptr};
  static constexpr const char *option_keys[] = {"broker", "profile", "security", "security_dir",
                                                nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,  // acks=0, acks=all
      .durability = PSB_VOLATILE | PSB_PERSISTENT,    // check() says why not more
      .history = 0,                                   // no depth to set (check())
      .transports = transports,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .readers_per_topic = 0,  // no limit: each reader is a consumer of its own
      .crosses_hosts = 1};     // to option broker, wherever it is
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  // The run's settings; each endpoint has its own librdkafka client.
  struct Context {
    explicit Context(const psb_config &cfg)
        : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
    const Settings settings;
  };
  class Writer;
  class Reader;
};

class Kafka::Writer {
 public:
  Writer(Context &ctx, const char *topic)
      : client_(RD_KAFKA_PRODUCER, ctx.settings, producer_properties(ctx.settings), on_delivery,
                this),
        topic_(topic),
        persistent_(ctx.settings.persistent) {
    client_.ensure_topic(topic_.c_str(), ctx.settings);
    rkt_ = rd_kafka_topic_new(client_.handle(), topic_.c_str(), nullptr);
    if (rkt_ == nullptr)
      fail("topic %s: %s", topic_.c_str(), rd_kafka_err2str(rd_kafka_last_error()));
  }

  ~Writer() {
    rd_kafka_t *rk = client_.handle();
    // What was not drained: a bounded wait while the broker is there, else dropped.
    if (client_.lost() || rd_kafka_flush(rk, kCloseFlushMs) != RD_KAFKA_RESP_ERR_NO_ERROR)
      rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  }  // then rkt_, then the client

  // Timed path: librdkafka copies the payload into a message it allocates (F_COPY) and
  // queues it for its broker thread; poll(0) then serves the delivery reports and error
  // callbacks that are due (each queue has its lock; librdkafka has no lock-free path).
  // Durability persistent, broker down: the message is queued all the same (0 returned)
  // and sent once librdkafka has reconnected; one not acknowledged within
  // kPersistentMessageTimeoutMs is counted in delivery_failed.
  void write(const void *data, size_t len) {
    if (client_.lost()) client_.fail_lost();
    if (rd_kafka_produce(rkt_, 0, RD_KAFKA_MSG_F_COPY, const_cast<void *>(data), len, nullptr, 0,
                         nullptr) != 0)
      produce_when_room(data, len);
    rd_kafka_poll(client_.handle(), 0);
  }

  // rd_kafka_flush: every message produced so far delivered (acks=all: acknowledged by
  // the broker; acks=0: written to the socket), their delivery reports served.
  bool drain(int64_t timeout_ns) {
    const int timeout_ms = timeout_ns <= 0 ? 0 : psb::sdk::ms_rounded_up(timeout_ns);
    const rd_kafka_resp_err_t e = rd_kafka_flush(client_.handle(), timeout_ms);
    if (client_.lost()) client_.fail_lost();
    if (e == RD_KAFKA_RESP_ERR__TIMED_OUT)
      throw psb::sdk::Timeout(
          psb::sdk::format("drain: %d messages to %s not delivered within %d ms",
                           rd_kafka_outq_len(client_.handle()), topic_.c_str(), timeout_ms));
    if (failed_.load() != 0)
      fail("drain: %llu messages to %s were not delivered (first: %s)",
           (unsigned long long)failed_.load(), topic_.c_str(), first_failure_);
    return true;
  }

  int matched() const { return -1; }  // a producer is not told who consumes

  void counters(psb::sdk::CounterSink put) const {
    put("delivery_failed", failed_.load());
    if (persistent_) put("broker_outages", client_.outages());
  }

 private:
  static Client::Properties producer_properties(const Settings &s) {
    const bool batch = s.profile == Profile::throughput;
    return {
        {"acks", s.acks_all ? "all" : "0"},
        {"enable.idempotence", s.acks_all ? "true" : "false"},
        // latency: send at once what is queued (a batch only of what piled up meanwhile);
        // throughput: wait up to 5 ms to fill batches of up to 100,000 messages / 1 MB.
        {"linger.ms", batch ? "5" : "0"},
        {"batch.num.messages", batch ? "100000" : "10000"},
        {"batch.size", "1000000"},
        {"compression.codec", "none"},
        {"message.max.bytes", std::to_string(s.max_message)},
        {"message.timeout.ms",
         std::to_string(s.persistent ? kPersistentMessageTimeoutMs : kMessageTimeoutMs)},
    };
  }

  static void on_delivery(rd_kafka_t *, const rd_kafka_message_t *m, void *opaque) {
    auto *self = static_cast<Writer *>(static_cast<Client *>(opaque)->user());
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      self->client_.mark_up();  // acknowledged: the broker is back
      return;
    }
    if (self->failed_.fetch_add(1) == 0)
      std::snprintf(self->first_failure_, sizeof self->first_failure_, "%s",
                    rd_kafka_err2str(m->err));
  }

  // The queue is full: wait for deliveries to free room, up to kQueueFullTimeoutMs; while
  // the broker is down (durability persistent) only up to kQueueFullWhileDownMs, then the
  // write fails (the node counts it) and the run goes on.
  [[gnu::cold, gnu::noinline]] void produce_when_room(const void *data, size_t len) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const rd_kafka_resp_err_t e = rd_kafka_last_error();
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        fail("produce to %s: %s", topic_.c_str(), rd_kafka_err2str(e));
      const auto waited = std::chrono::steady_clock::now() - start;
      if (client_.down() && waited > std::chrono::milliseconds(kQueueFullWhileDownMs))
        fail(
            "produce to %s: librdkafka's queue is full (%d messages) while the broker at %s "
            "is down; waited %lld ms for it to return",
            topic_.c_str(), rd_kafka_outq_len(client_.handle()), client_.broker().c_str(),
            (long long)kQueueFullWhileDownMs);
      if (waited > std::chrono::milliseconds(kQueueFullTimeoutMs))
        fail("produce to %s: librdkafka's queue stayed full for %lld ms", topic_.c_str(),
             (long long)kQueueFullTimeoutMs);
      rd_kafka_poll(client_.handle(), 1);  // deliveries free room
      if (client_.lost()) client_.fail_lost();
      if (rd_kafka_produce(rkt_, 0, RD_KAFKA_MSG_F_COPY, const_cast<void *>(data), len, nullptr, 0,
                           nullptr) == 0)
        return;
    }
  }

  Client client_;
  std::string topic_;
  const bool persistent_;
  Owned<rd_kafka_topic_t *, rd_kafka_topic_destroy> rkt_;
  std::atomic<uint64_t> failed_{0};
  char first_failure_[200] = {};
};

class Kafka::Reader {
 public:
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
      : client_(RD_KAFKA_CONSUMER, ctx.settings, consumer_properties(ctx.settings)),
        topic_(topic),
        persistent_(ctx.settings.persistent) {
    client_.ensure_topic(topic_.c_str(), ctx.settings);
    assign_at_end();
    if (listener)
      thread_.start(listener, [this, listener] {  // take() is the thread's alone then
        const void *data;
        size_t len;
        while (!thread_.stopping())
          if (take(kListenerPollNs, data, len)) listener(data, len);
      });
  }

  ~Reader() {
    thread_.stop();
    release();
    rd_kafka_consumer_close(client_.handle());
  }

  // Timed path. wait: consumer_poll blocks on the consumer's queue (milliseconds, rounded
  // up); poll: consumer_poll(0) returns at once. The message stays librdkafka's (its
  // payload points into the fetch response) until release() or the next take().
  bool take(int64_t timeout_ns, const void *&data, size_t &len) {
    release();
    const int timeout_ms = timeout_ns <= 0 ? 0 : psb::sdk::ms_rounded_up(timeout_ns);
    rd_kafka_message_t *m = rd_kafka_consumer_poll(client_.handle(), timeout_ms);
    if (m == nullptr) {
      if (client_.lost()) client_.fail_lost();
      return false;
    }
    held_ = m;
    if (m->err) {
      if (rides_out(m)) return false;  // released by the next take()
      fail_message(m);
    }
    client_.mark_up();
    data = m->payload;
    len = m->len;
    return true;
  }

  void release() {
    if (held_ != nullptr) rd_kafka_message_destroy(held_);
    held_ = nullptr;
  }

  int matched() const { return -1; }  // nor is a consumer told who produces

  void counters(psb::sdk::CounterSink put) const {
    if (!persistent_) return;
    put("broker_outages", client_.outages());
    put("consume_errors_ridden_out", ridden_out_.load());
  }

 private:
  static Client::Properties consumer_properties(const Settings &s) {
    return {
        // assign() needs a group id in librdkafka; nothing joins the group (no
        // subscribe) and nothing is committed.
        {"group.id", "psbench-" + s.run_id},
        {"enable.auto.commit", "false"},
        {"enable.auto.offset.store", "false"},
        {"enable.partition.eof", "false"},
        {"fetch.min.bytes", "1"},     // the broker answers a fetch as soon as data is there
        {"fetch.wait.max.ms", "10"},  // and an empty one within 10 ms
        {"fetch.error.backoff.ms", "10"},
        {"max.partition.fetch.bytes", std::to_string(s.max_message)},
        // A reader behind by more than the broker keeps fails instead of skipping ahead.
        {"auto.offset.reset", "error"},
    };
  }

  // Partition 0 at its high watermark now: every message produced after create_reader
  // returns has an offset at or above it, so none is missed (an OFFSET_END assignment is
  // resolved later, and would miss what is produced meanwhile).
  void assign_at_end() {
    rd_kafka_t *rk = client_.handle();
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
    const auto end = std::chrono::steady_clock::now() + kWatermarkRetryFor;
    do {
      e = rd_kafka_query_watermark_offsets(rk, topic_.c_str(), 0, &low, &high, kWatermarkTimeoutMs);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      rd_kafka_poll(rk, 0);
      if (client_.lost()) client_.fail_lost();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < end);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
      fail("topic %s: cannot read the end of partition 0: %s", topic_.c_str(), rd_kafka_err2str(e));
    rd_kafka_poll_set_consumer(rk);  // from now on consumer_poll serves the error callback
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0)->offset = high;
    e = rd_kafka_assign(rk, list);
    rd_kafka_topic_partition_list_destroy(list);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR)
      fail("topic %s: cannot assign partition 0: %s", topic_.c_str(), rd_kafka_err2str(e));
  }

  // Durability persistent: a consumer error of the broker's outage or its restart (a
  // fetch or coordinator error librdkafka passes on while it reconnects) is "no sample",
  // and the consumer goes on from its position. Never one that ends the partition's
  // fetching: a fatal error, an offset the broker no longer has (auto.offset.reset=error:
  // what the log lost), a message too large or a topic not authorized.
  [[gnu::cold, gnu::noinline]] bool rides_out(const rd_kafka_message_t *m) {
    if (!persistent_) return false;
    switch (m->err) {
      case RD_KAFKA_RESP_ERR__FATAL:
      case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
      case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
      case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
        return false;
      default:
        break;
    }
    char reason[8];
    if (rd_kafka_fatal_error(client_.handle(), reason, sizeof reason) != 0) return false;
    ridden_out_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  [[noreturn, gnu::cold, gnu::noinline]] void fail_message(const rd_kafka_message_t *m) const {
    fail("receive from %s: %s (%s)", topic_.c_str(), rd_kafka_err2name(m->err),
         rd_kafka_message_errstr(m));
  }

  Client client_;
  std::string topic_;
  const bool persistent_;
  std::atomic<uint64_t> ridden_out_{0};
  rd_kafka_message_t *held_ = nullptr;
  psb::sdk::ListenerThread thread_;
};

}  // namespace
}  // namespace psbkafka

PSB_SDK_DRIVER(psbkafka::Kafka)
