// The subscribing end of a topic.
//
// create: registers with the connection (so a retained message that follows the SUBACK
// is caught), subscribes at the run's QoS and waits for the broker's SUBACK: when
// create_reader returns, the broker routes every later publish on the topic to it.
//
// listener: on_message (the loop thread: libmosquitto's, or with durability persistent
//   the driver's own) calls the listener with the payload
//   libmosquitto received; no copy in the driver.
// wait/poll: on_message copies the payload into a preallocated ring of kSlots slots of
//   max_payload bytes; take() hands out a pointer into the slot, valid until release()
//   or the next take(). One mosquitto_loop pass delivers one message at QoS 0; at QoS 1
//   it may deliver more (libmosquitto reads as many packets as it has unacknowledged
//   QoS 1 messages out), and should that ever overrun the ring, the surplus is kept in
//   heap copies (counted in spilled_) rather than lost.
// Zero-length messages are not delivered: they are how MQTT clears a retained message
// (psbench messages are 32 bytes at least).
#ifndef PSBENCH_MQTT_READER_H
#define PSBENCH_MQTT_READER_H

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbmqtt {

class Reader {
 public:
  static constexpr size_t kSlots = 4;

  Reader(Connection &c, const char *topic, psb::sdk::Listener listener)
      : conn_(&c), topic_(checked_topic(c, topic, bool(listener))), on_data_(listener) {
    if (!on_data_) {
      slot_size_ = size_t(c.settings().max_payload);
      try {
        storage_.resize(kSlots * slot_size_);
      } catch (const std::bad_alloc &) {
        psb::sdk::fail("out of memory for %zu receive slots of %zu bytes", kSlots, slot_size_);
      }
      std::memset(storage_.data(), 0, storage_.size());  // touched now, not on first use
    }
    c.add_reader(this);
    registered_ = true;
    try {
      c.subscribe(topic_, c.settings().qos);
    } catch (...) {
      tear_down();
      throw;
    }
  }
  ~Reader() { tear_down(); }  // no listener call after it returns; unsubscribes

  const std::string &topic() const { return topic_; }

  bool take(int64_t timeout_ns, const void *&data, size_t &len) {
    if (on_data_) psb::sdk::fail("take() is not used in listener mode");
    std::lock_guard<std::mutex> lock(conn_->io);
    release_locked();
    if (have() || oversized_ != 0) return hand_out(data, len);
    if (conn_->lost()) conn_->throw_lost();
    if (timeout_ns == 0) {  // poll: one non-blocking pass
      if (conn_->pump(0) != MOSQ_ERR_SUCCESS) conn_->throw_lost();
      return have() || oversized_ != 0 ? hand_out(data, len) : false;
    }
    const int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
    for (;;) {
      const int64_t left = deadline - now_ns();
      if (left <= 0) return false;
      // mosquitto_loop counts in milliseconds: round up, so a short wait still waits.
      const int64_t ms = left >= 1'000'000'000 ? 1000 : (left + 999'999) / 1'000'000;
      errno = 0;
      if (conn_->pump(int(ms)) != MOSQ_ERR_SUCCESS) conn_->throw_lost();
      if (have() || oversized_ != 0) return hand_out(data, len);
      // mosquitto_loop() reports an interrupted select() as success; errno still says.
      if (errno == EINTR) return false;
    }
  }

  void release() {
    if (on_data_) return;
    std::lock_guard<std::mutex> lock(conn_->io);
    release_locked();
  }

  int matched() const { return -1; }  // MQTT does not tell a client who publishes
  // Persistent: how often the connection came back, and how often without its session.
  void counters(psb::sdk::CounterSink put) const {
    if (!conn_->settings().persistent) return;
    put("reconnects", conn_->reconnects());
    put("sessions_lost", conn_->sessions_lost());
  }

  // From on_message: the loop thread (listener) or the thread that holds conn->io.
  void deliver(const void *payload, size_t len) {
    if (len == 0) return;  // a retained message being cleared
    if (on_data_) {
      on_data_(payload, len);
      return;
    }
    if (len > slot_size_) {
      if (oversized_++ == 0) oversized_len_ = len;
      return;
    }
    if (count_ < kSlots && spill_.empty()) {
      const size_t idx = (head_ + count_) % kSlots;
      std::memcpy(storage_.data() + idx * slot_size_, payload, len);
      lengths_[idx] = len;
      ++count_;
      return;
    }
    // More messages in one loop pass than slots (QoS 1 only): keep them, in order.
    const auto *p = static_cast<const uint8_t *>(payload);
    spill_.emplace_back(p, p + len);
    ++spilled_;
  }

 private:
  static std::string checked_topic(const Connection &c, const char *topic, bool listener) {
    if (listener != (c.settings().notify == PSB_NOTIFY_LISTENER))
      psb::sdk::fail("on_data must be given exactly in listener mode");
    std::string name = mqtt_topic(c.settings(), topic);
    if (mosquitto_sub_topic_check(name.c_str()) != MOSQ_ERR_SUCCESS ||
        name.find_first_of("+#") != std::string::npos)
      psb::sdk::fail("'%s' is not a valid MQTT topic without wildcards", name.c_str());
    if (c.lost()) c.throw_lost();
    return name;
  }

  bool have() const { return count_ > 0 || !spill_.empty(); }

  bool hand_out(const void *&data, size_t &len) {
    if (oversized_ != 0) {
      oversized_ = 0;
      psb::sdk::fail(
          "received a %zu-byte message on %s, over this run's max_payload of %zu "
          "bytes (is another run publishing on it?)",
          oversized_len_, topic_.c_str(), slot_size_);
    }
    if (count_ > 0) {
      data = storage_.data() + head_ * slot_size_;
      len = lengths_[head_];
    } else {
      held_copy_.swap(spill_.front());
      spill_.pop_front();
      held_spill_ = true;
      data = held_copy_.data();
      len = held_copy_.size();
    }
    held_ = true;
    return true;
  }

  void release_locked() {
    if (!held_) return;
    held_ = false;
    if (held_spill_) {
      held_spill_ = false;
      return;
    }
    head_ = (head_ + 1) % kSlots;
    --count_;
  }

  void tear_down() {
    if (!registered_) return;
    registered_ = false;
    conn_->remove_reader(this);
    if (!conn_->lost()) conn_->unsubscribe(topic_);
  }

  Connection *const conn_;
  const std::string topic_;
  bool registered_ = false;
  const psb::sdk::Listener on_data_;

  // wait/poll only; everything below is touched with conn_->io held.
  size_t slot_size_ = 0;
  std::vector<uint8_t> storage_;  // kSlots * slot_size_
  size_t lengths_[kSlots] = {};
  size_t head_ = 0, count_ = 0;  // oldest slot, slots in use (the held one included)
  bool held_ = false, held_spill_ = false;
  std::deque<std::vector<uint8_t>> spill_;
  std::vector<uint8_t> held_copy_;  // a spilled message handed out
  uint64_t spilled_ = 0;
  uint64_t oversized_ = 0;  // messages over max_payload (another writer's configuration)
  size_t oversized_len_ = 0;
};

}  // namespace psbmqtt

#endif
