// The subscribing end of a topic.
//
// create: registers with the connection (so a retained message that follows the SUBACK
// is caught), subscribes at the run's QoS and waits for the broker's SUBACK: when
// create_reader returns, the broker routes every later publish on the topic to it.
//
// listener: on_message (libmosquitto's loop thread) calls the listener with the payload
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

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"

namespace psbmqtt {

class Connection;

class Reader {
 public:
  static constexpr size_t kSlots = 4;

  Reader(Connection &c, const char *topic, psb::sdk::Listener listener);
  ~Reader();  // no listener call after it returns; unsubscribes

  const std::string &topic() const { return topic_; }
  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();
  int matched() const { return -1; }  // MQTT does not tell a client who publishes

  // From on_message: the loop thread (listener) or the thread that holds conn->io.
  void deliver(const void *payload, size_t len);

 private:
  bool have() const { return count_ > 0 || !spill_.empty(); }
  bool hand_out(const void *&data, size_t &len);
  void release_locked();
  void tear_down();

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
