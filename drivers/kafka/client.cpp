#include "client.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "psbench/sdk.hpp"

namespace psbkafka {
namespace {

using psb::sdk::fail;

constexpr int kAdminTimeoutMs = 10000;
constexpr auto kLeaderTimeout = std::chrono::seconds(15);

template <class T, void (*Free)(T *)>
struct Freed {
  void operator()(T *p) const {
    if (p) Free(p);
  }
};
template <class T, void (*Free)(T *)>
using Owned = std::unique_ptr<T, Freed<T, Free>>;

void set(rd_kafka_conf_t *conf, const char *key, const std::string &value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    fail("librdkafka refused %s=%s: %s", key, value.c_str(), err);
  }
}

}  // namespace

Client::Client(rd_kafka_type_t type, const Settings &s,
               const std::vector<std::pair<const char *, std::string>> &properties,
               void (*dr_msg_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *), void *opaque)
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

Client::~Client() {
  if (rk_) rd_kafka_destroy(rk_);  // joins librdkafka's threads
}

void Client::on_error(rd_kafka_t *, int err, const char *reason, void *opaque) {
  auto *self = static_cast<Client *>(opaque);
  if (self->tls_ && (err == RD_KAFKA_RESP_ERR__SSL || err == RD_KAFKA_RESP_ERR__TRANSPORT) &&
      !self->health_.tls_failed.load()) {
    // The first one (fail_lost says it when the broker was never reached: then a TLS
    // failure is why "all brokers down" came).
    std::snprintf(self->health_.tls_reason, sizeof self->health_.tls_reason, "%s: %s",
                  rd_kafka_err2name(rd_kafka_resp_err_t(err)), reason ? reason : "");
    self->health_.tls_failed.store(true);
  }
  // Every broker down (with one broker: it went away) or a fatal error (the idempotent
  // producer's): the run cannot go on. Other errors are librdkafka's to retry. With
  // durability persistent a broker that goes away after it was reached is waited for:
  // librdkafka reconnects by itself and sends what it queued meanwhile.
  if (err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && err != RD_KAFKA_RESP_ERR__FATAL) return;
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && self->ride_out_ && self->reached_.load()) {
    if (!self->health_.down.exchange(true)) self->health_.outages.fetch_add(1);
    return;
  }
  if (self->health_.lost.load()) return;
  std::snprintf(self->health_.reason, sizeof self->health_.reason, "%s: %s",
                rd_kafka_err2name(rd_kafka_resp_err_t(err)), reason ? reason : "");
  self->health_.lost.store(true);
}

void Client::fail_lost() const {
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

void Client::ensure_topic(const char *topic, const Settings &s) {
  char err[512];
  Owned<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy> wanted(
      rd_kafka_NewTopic_new(topic, 1, 1, err, sizeof err));
  if (!wanted) fail("topic %s: %s", topic, err);
  const std::string max_message = std::to_string(s.max_message);
  if (rd_kafka_NewTopic_set_config(wanted.get(), "max.message.bytes", max_message.c_str()))
    fail("topic %s: cannot set max.message.bytes", topic);
  Owned<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy> options(
      rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_CREATETOPICS));
  rd_kafka_AdminOptions_set_request_timeout(options.get(), kAdminTimeoutMs, err, sizeof err);
  rd_kafka_AdminOptions_set_operation_timeout(options.get(), kAdminTimeoutMs, err, sizeof err);
  Owned<rd_kafka_queue_t, rd_kafka_queue_destroy> queue(rd_kafka_queue_new(rk_));
  rd_kafka_NewTopic_t *one = wanted.get();
  rd_kafka_CreateTopics(rk_, &one, 1, options.get(), queue.get());
  // In slices, so that a broker nobody answers at fails within a second or so.
  Owned<rd_kafka_event_t, rd_kafka_event_destroy> event;
  for (int waited = 0; !event && waited < kAdminTimeoutMs + 5000; waited += 100) {
    event.reset(rd_kafka_queue_poll(queue.get(), 100));
    rd_kafka_poll(rk_, 0);  // the error callback, served from the main queue
    if (!event && lost()) fail_lost();
  }
  if (!event)
    fail("creating topic %s: no answer from the broker at %s within %d ms", topic, broker_.c_str(),
         kAdminTimeoutMs + 5000);
  if (rd_kafka_event_error(event.get()))
    fail("creating topic %s at the broker at %s: %s", topic, broker_.c_str(),
         rd_kafka_event_error_string(event.get()));
  size_t n = 0;
  const rd_kafka_topic_result_t **results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &n);
  const rd_kafka_resp_err_t created =
      n == 1 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR__BAD_MSG;
  if (created != RD_KAFKA_RESP_ERR_NO_ERROR && created != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
    fail("creating topic %s at the broker at %s: %s (%s)", topic, broker_.c_str(),
         rd_kafka_err2name(created), n == 1 ? rd_kafka_topic_result_error_string(results[0]) : "");

  // The partition is usable once the broker names its leader.
  Owned<rd_kafka_topic_t, rd_kafka_topic_destroy> rkt(rd_kafka_topic_new(rk_, topic, nullptr));
  const auto end = std::chrono::steady_clock::now() + kLeaderTimeout;
  std::string last = "no metadata";
  while (std::chrono::steady_clock::now() < end) {
    const rd_kafka_metadata_t *md = nullptr;
    const rd_kafka_resp_err_t e = rd_kafka_metadata(rk_, 0, rkt.get(), &md, 2000);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const bool ready = md->topic_cnt == 1 && md->topics[0].err == 0 &&
                         md->topics[0].partition_cnt == 1 && md->topics[0].partitions[0].err == 0 &&
                         md->topics[0].partitions[0].leader >= 0;
      if (!ready)
        last = rd_kafka_err2name(md->topic_cnt == 1 && md->topics[0].err
                                     ? md->topics[0].err
                                     : RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE);
      rd_kafka_metadata_destroy(md);
      if (ready) {
        reached_.store(true);
        return;
      }
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

}  // namespace psbkafka
