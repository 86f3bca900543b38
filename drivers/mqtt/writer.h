// The publishing end of a topic: mosquitto_publish at the run's QoS, retained when the
// durability is transient_local.
//
// wait/poll (no loop thread): mosquitto_publish writes the packet to the socket from the
// caller's thread. A connection without a reader has nobody else to run the loop, so
// write() also runs one non-blocking mosquitto_loop pass when there is something for it
// to do: at QoS 1 (read PUBACKs, which free libmosquitto's in-flight window), when part of
// a large message is still unwritten, and every 100 ms (keepalive).
// listener: mosquitto_publish queues the packet and wakes the loop thread (libmosquitto's;
// with durability persistent the driver's own), which writes it.
//
// destroy: clears the retained message (transient_local), then waits (at most 10 s)
// until everything published is on the wire or acknowledged.
//
// Persistent (QoS 1): while the broker is away, mosquitto_publish keeps the message in
// libmosquitto's queue and says MOSQ_ERR_NO_CONN; it is sent after the reconnect, so
// write() returns 0. Up to kMaxQueuedAway unacknowledged messages: beyond, a write while
// the broker is away is an error (not queued), so memory stays bounded.
#ifndef PSBENCH_MQTT_WRITER_H
#define PSBENCH_MQTT_WRITER_H

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbmqtt {

class Writer {
 public:
  Writer(Connection &c, const char *topic)
      : conn_(&c),
        topic_(checked_topic(c, topic)),
        qos_(c.settings().qos),
        retain_(c.settings().retain),
        persistent_(c.settings().persistent),
        self_driven_(!c.threaded()),
        max_payload_(size_t(c.settings().max_payload)) {
    c.link(this);
  }

  ~Writer() {
    if (!conn_->lost()) {
      try {
        // A zero-length retained message removes the topic's retained message from the
        // broker; subscribers get it as an empty message, which readers drop.
        if (retained_something_) publish(nullptr, 0, true);
        conn_->flush(kFlushTimeoutNs);
      } catch (const std::exception &) {
      }
    }
    conn_->unlink(this);
  }

  void write(const void *data, size_t len) {
    if (conn_->lost()) conn_->throw_lost();
    if (persistent_ && !conn_->connected() && conn_->unfinished() >= kMaxQueuedAway)
      psb::sdk::fail(
          "the broker at %s is away and %llu messages wait for it in libmosquitto's queue; "
          "this one is not queued",
          conn_->settings().broker.text.c_str(), (unsigned long long)conn_->unfinished());
    if (len > max_payload_)
      psb::sdk::fail("a %zu-byte message is over this run's max_payload of %zu bytes", len,
                     max_payload_);
    // Readers drop zero-length messages (they clear a retained message), so sending one
    // would only look like a loss: refuse it.
    if (len == 0)
      psb::sdk::fail(
          "a 0-byte message cannot be measured: MQTT uses it to clear a retained message");
    publish(data, len, retain_);
    retained_something_ = retain_;
    if (!self_driven_ || conn_->reader_count() != 0) return;  // someone else runs the loop
    const int64_t now = qos_ == 0 ? now_ns() : 0;
    if (qos_ == 0 && now < next_service_ns_ && !mosquitto_want_write(conn_->mosq())) return;
    std::unique_lock<std::mutex> lock(conn_->io, std::try_to_lock);
    if (!lock.owns_lock()) return;
    if (conn_->pump(0) != MOSQ_ERR_SUCCESS) conn_->throw_lost();
    if (qos_ == 0) next_service_ns_ = now + kServiceEveryNs;
  }

  // ABI drain: true once every publish is on the wire (QoS 0) or acknowledged by the
  // broker (QoS 1); throws psb::sdk::Timeout when timeout_ns passed first, Error when the
  // connection is lost. (No flush(): every write goes out at once.)
  bool drain(int64_t timeout_ns) {
    conn_->flush(timeout_ns);
    return true;
  }
  int matched() const { return -1; }  // MQTT does not tell a client who subscribes
  void counters(psb::sdk::CounterSink put) const {
    if (persistent_) put("reconnects", conn_->reconnects());
  }

 private:
  static constexpr int64_t kServiceEveryNs = 100'000'000;
  static constexpr int64_t kFlushTimeoutNs = 10'000'000'000;
  static constexpr uint64_t kMaxQueuedAway = 100'000;

  static std::string checked_topic(const Connection &c, const char *topic) {
    std::string name = mqtt_topic(c.settings(), topic);
    if (mosquitto_pub_topic_check(name.c_str()) != MOSQ_ERR_SUCCESS)
      psb::sdk::fail("'%s' is not a valid MQTT topic to publish on", name.c_str());
    if (c.lost()) c.throw_lost();
    return name;
  }

  void publish(const void *data, size_t len, bool retain) {
    conn_->count_publish();
    errno = 0;
    const int rc =
        mosquitto_publish(conn_->mosq(), nullptr, topic_.c_str(), int(len), data, qos_, retain);
    // Persistent, the broker away: queued (the message is in libmosquitto's outgoing
    // list before it tries the socket), resent after the reconnect's CONNACK.
    const bool queued = rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO;
    if (queued && persistent_ && qos_ == 1 && !conn_->lost()) return;
    if (rc != MOSQ_ERR_SUCCESS) {
      const int e = errno;
      conn_->uncount_publish();
      if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO) {
        conn_->mark_lost(rc, e);
        conn_->throw_lost();
      }
      conn_->fail("publish", rc, e);
    }
  }

  Connection *const conn_;
  const std::string topic_;
  const int qos_;
  const bool retain_, persistent_, self_driven_;
  const size_t max_payload_;
  int64_t next_service_ns_ = 0;
  bool retained_something_ = false;
};

}  // namespace psbmqtt

#endif
