// What the kafka driver's writers and readers share: a librdkafka client made from the
// run's settings, the broker's health as librdkafka reports it, and topic creation.
#ifndef PSBENCH_KAFKA_CLIENT_H
#define PSBENCH_KAFKA_CLIENT_H

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "settings.h"

namespace psbkafka {

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
  // settings: librdkafka properties on top of the common ones (bootstrap.servers, Nagle
  // off, the error callback). Throws with librdkafka's words when one is refused.
  Client(rd_kafka_type_t type, const Settings &s,
         const std::vector<std::pair<const char *, std::string>> &properties,
         void (*dr_msg_cb)(rd_kafka_t *, const rd_kafka_message_t *, void *) = nullptr,
         void *opaque = nullptr);
  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;
  ~Client();

  rd_kafka_t *handle() const { return rk_; }
  // What dr_msg_cb's opaque argument is: the Client; this is the opaque given to it.
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
  // Throws "the broker at ADDRESS is gone (librdkafka: REASON)".
  [[noreturn, gnu::cold, gnu::noinline]] void fail_lost() const;

  // Creates the topic (1 partition, replication 1, max.message.bytes for the run) unless
  // it exists, and waits until its partition has a leader. Throws on failure. Serves the
  // main queue (rd_kafka_poll): call it before a consumer's poll_set_consumer.
  void ensure_topic(const char *topic, const Settings &s);

 private:
  static void on_error(rd_kafka_t *, int err, const char *reason, void *opaque);

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

#endif
