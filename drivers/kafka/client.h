// What the kafka driver's writers and readers share: a librdkafka client made from the
// run's settings, the broker's health as librdkafka reports it, and topic creation.
#pragma once
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "psbench/sdk.hpp"
#include "settings.h"

namespace psbkafka {

using psb::sdk::fail;
using psb::sdk::Owned;

constexpr int kAdminTimeoutMs = 10000;
constexpr auto kLeaderTimeout = std::chrono::seconds(15);

// What librdkafka's error callback said last of the broker: lost is set (once) when the
// client hit a fatal error, or when every broker is down and the run does not ride that
// out (volatile); the timed path reads one atomic.
struct Health {
  std::atomic<bool> lost{false};
  char reason[400] = {};
  // durability persistent, once the broker was reached: "every broker down" is an outage
  // librdkafka rides out (it reconnects by itself), not the end. down: since the last
  // such report, until the owner saw the broker answer again (mark_up).
  std::atomic<bool> down{false};
  std::atomic<uint64_t> outages{0};
  // security=tls: librdkafka's first TLS error (its handshake's, or the connection the
  // broker closed after it): the cause that "all brokers down" follows from.
  std::atomic<bool> tls_failed{false};
  char tls_reason[400] = {};
};

// One librdkafka client (producer or consumer), destroyed with its owner.
class Client {
 public:
  using Properties = std::vector<std::pair<const char *, std::string>>;

  // properties: librdkafka's on top of the common ones (bootstrap.servers, Nagle off, the
  // error callback). Throws with librdkafka's words when one is refused. opaque: what
  // user() returns to dr_msg_cb (whose own opaque argument is the Client).
  Client(rd_kafka_type_t type, const Settings &s, const Properties &properties,
         void (*dr_msg_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *) = nullptr,
         void *opaque = nullptr)
      : broker_(s.broker), tls_(s.tls.on), ride_out_(s.persistent), user_opaque_(opaque) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", s.broker);
    set(conf, "client.id", "psbench-" + s.run_id);
    // Nagle off: librdkafka's default leaves it on, which holds small requests back.
    set(conf, "socket.nagle.disable", "true");
    // Reconnect quickly: the first retry after 10 ms, doubling up to 1 s (librdkafka's
    // backoff, with its jitter); durability persistent, where a broker that is down is
    // waited for: from 100 ms, so it is not asked in a tight loop. Either way a broker that
    // comes back is reached within about a second of accepting again.
    set(conf, "reconnect.backoff.ms", s.persistent ? "100" : "10");
    set(conf, "reconnect.backoff.max.ms", "1000");
    set(conf, "log_level", "3");  // errors only: librdkafka's log goes to stderr
    if (s.tls.on) {
      // Mutual TLS: the broker's certificate must chain to ca.pem and name the address
      // connected to (endpoint identification https: an IP address SAN here); ours is
      // cert.pem + key.pem.
      psb::sdk::require_files(s.tls);
      set(conf, "security.protocol", "ssl");
      set(conf, "ssl.ca.location", s.tls.ca);
      set(conf, "ssl.certificate.location", s.tls.cert);
      set(conf, "ssl.key.location", s.tls.key);
      set(conf, "ssl.endpoint.identification.algorithm", "https");
      set(conf, "enable.ssl.certificate.verification", "true");
    }
    for (const auto &[key, value] : properties) set(conf, key, value);
    rd_kafka_conf_set_error_cb(conf, on_error);
    if (dr_msg_cb) rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
    rd_kafka_conf_set_opaque(conf, this);
    char err[512];
    rk_ = rd_kafka_new(type, conf, err, sizeof err);  // owns conf when it succeeds
    if (rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      fail("cannot create a librdkafka %s: %s", type == RD_KAFKA_PRODUCER ? "producer" : "consumer",
           err);
    }
  }
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;
  ~Client() {
    if (rk_) rd_kafka_destroy(rk_);  // joins librdkafka's threads
  }

  rd_kafka_t *handle() const { return rk_; }
  void *user() const { return user_opaque_; }
  bool lost() const { return health_.lost.load(std::memory_order_relaxed); }
  // durability persistent: every broker was reported down since the owner last saw one
  // answer; how many times that began.
  bool down() const { return health_.down.load(std::memory_order_relaxed); }
  void mark_up() {
    if (down()) health_.down.store(false, std::memory_order_relaxed);
  }
  uint64_t outages() const { return health_.outages.load(std::memory_order_relaxed); }
  const std::string &broker() const { return broker_; }

  // Throws "the broker at ADDRESS is gone (librdkafka: REASON)", or before the broker was
  // reached, that it cannot be (with TLS: the TLS failure that came first).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_lost() const {
    if (!reached_ && tls_ && health_.tls_failed.load())
      fail("cannot reach the broker at %s with TLS (librdkafka: %s; then %s)", broker_.c_str(),
           health_.tls_reason, health_.reason);
    if (!reached_)
      fail(
          "cannot reach the broker at %s (librdkafka: %s); is it running there? psbench "
          "starts one itself unless you give option broker",
          broker_.c_str(), health_.reason);
    fail("the broker at %s is gone (librdkafka: %s); the driver does not wait for it to return",
         broker_.c_str(), health_.reason);
  }

  // Creates the topic (1 partition, replication 1, max.message.bytes for the run) unless
  // it exists, and waits until its partition has a leader. Throws on failure. Serves the
  // main queue (rd_kafka_poll): call it before a consumer's poll_set_consumer.
  void ensure_topic(const char *topic, const Settings &s) {
    create_topic(topic, s);
    // The partition is usable once the broker names its leader.
    Owned<rd_kafka_topic_t *, rd_kafka_topic_destroy> rkt(rd_kafka_topic_new(rk_, topic, nullptr));
    const auto end = std::chrono::steady_clock::now() + kLeaderTimeout;
    std::string last = "no metadata";
    while (std::chrono::steady_clock::now() < end) {
      const rd_kafka_metadata_t *md = nullptr;
      const rd_kafka_resp_err_t e = rd_kafka_metadata(rk_, 0, rkt, &md, 2000);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const bool ready =
            md->topic_cnt == 1 && md->topics[0].err == 0 && md->topics[0].partition_cnt == 1 &&
            md->topics[0].partitions[0].err == 0 && md->topics[0].partitions[0].leader >= 0;
        if (!ready)
          last = rd_kafka_err2name(md->topic_cnt == 1 && md->topics[0].err
                                       ? md->topics[0].err
                                       : RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE);
        rd_kafka_metadata_destroy(md);
        if (ready) return reached_.store(true);
      } else {
        last = rd_kafka_err2name(e);
      }
      rd_kafka_poll(rk_, 0);
      if (lost()) fail_lost();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    fail("topic %s has no leader at the broker at %s after %lld s (%s)", topic, broker_.c_str(),
         (long long)std::chrono::duration_cast<std::chrono::seconds>(kLeaderTimeout).count(),
         last.c_str());
  }

 private:
  static void set(rd_kafka_conf_t *conf, const char *key, const std::string &value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      fail("librdkafka refused %s=%s: %s", key, value.c_str(), err);
    }
  }

  static void on_error(rd_kafka_t *, int err, const char *reason, void *opaque) {
    auto *self = static_cast<Client *>(opaque);
    Health &h = self->health_;
    if (self->tls_ && (err == RD_KAFKA_RESP_ERR__SSL || err == RD_KAFKA_RESP_ERR__TRANSPORT) &&
        !h.tls_failed.load()) {
      // The first one (fail_lost says it when the broker was never reached: then a TLS
      // failure is why "all brokers down" came).
      std::snprintf(h.tls_reason, sizeof h.tls_reason, "%s: %s",
                    rd_kafka_err2name(rd_kafka_resp_err_t(err)), reason ? reason : "");
      h.tls_failed.store(true);
    }
    // Every broker down (with one broker: it went away) or a fatal error (the idempotent
    // producer's): the run cannot go on. Other errors are librdkafka's to retry. With
    // durability persistent a broker that goes away after it was reached is waited for:
    // librdkafka reconnects by itself and sends what it queued meanwhile.
    if (err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && err != RD_KAFKA_RESP_ERR__FATAL) return;
    if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && self->ride_out_ && self->reached_.load()) {
      if (!h.down.exchange(true)) h.outages.fetch_add(1);
      return;
    }
    if (h.lost.load()) return;
    std::snprintf(h.reason, sizeof h.reason, "%s: %s", rd_kafka_err2name(rd_kafka_resp_err_t(err)),
                  reason ? reason : "");
    h.lost.store(true);
  }

  // CreateTopics, answered within kAdminTimeoutMs (and 5 s more); "already exists" is
  // success.
  void create_topic(const char *topic, const Settings &s) {
    char err[512];
    Owned<rd_kafka_NewTopic_t *, rd_kafka_NewTopic_destroy> wanted(
        rd_kafka_NewTopic_new(topic, 1, 1, err, sizeof err));
    if (wanted == nullptr) fail("topic %s: %s", topic, err);
    const std::string max_message = std::to_string(s.max_message);
    if (rd_kafka_NewTopic_set_config(wanted, "max.message.bytes", max_message.c_str()))
      fail("topic %s: cannot set max.message.bytes", topic);
    Owned<rd_kafka_AdminOptions_t *, rd_kafka_AdminOptions_destroy> options(
        rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_CREATETOPICS));
    rd_kafka_AdminOptions_set_request_timeout(options, kAdminTimeoutMs, err, sizeof err);
    rd_kafka_AdminOptions_set_operation_timeout(options, kAdminTimeoutMs, err, sizeof err);
    Owned<rd_kafka_queue_t *, rd_kafka_queue_destroy> queue(rd_kafka_queue_new(rk_));
    rd_kafka_NewTopic_t *one = wanted;
    rd_kafka_CreateTopics(rk_, &one, 1, options, queue);
    // In slices, so that a broker nobody answers at fails within a second or so.
    Owned<rd_kafka_event_t *, rd_kafka_event_destroy> event;
    for (int waited = 0; event == nullptr && waited < kAdminTimeoutMs + 5000; waited += 100) {
      event = rd_kafka_queue_poll(queue, 100);
      rd_kafka_poll(rk_, 0);  // the error callback, served from the main queue
      if (event == nullptr && lost()) fail_lost();
    }
    if (event == nullptr)
      fail("creating topic %s: no answer from the broker at %s within %d ms", topic,
           broker_.c_str(), kAdminTimeoutMs + 5000);
    if (rd_kafka_event_error(event))
      fail("creating topic %s at the broker at %s: %s", topic, broker_.c_str(),
           rd_kafka_event_error_string(event));
    size_t n = 0;
    const rd_kafka_topic_result_t **results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &n);
    const rd_kafka_resp_err_t created =
        n == 1 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR__BAD_MSG;
    if (created != RD_KAFKA_RESP_ERR_NO_ERROR && created != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
      fail("creating topic %s at the broker at %s: %s (%s)", topic, broker_.c_str(),
           rd_kafka_err2name(created),
           n == 1 ? rd_kafka_topic_result_error_string(results[0]) : "");
  }

  rd_kafka_t *rk_ = nullptr;
  std::string broker_;
  bool tls_ = false;       // option security=tls
  bool ride_out_ = false;  // durability persistent: outages after reached_ are not the end
  Health health_;
  // The topic was made ready there: a broker lost from now on (read by the thread that
  // serves the error callback).
  std::atomic<bool> reached_{false};
  void *user_opaque_ = nullptr;
};

}  // namespace psbkafka
