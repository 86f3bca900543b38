// The publishing end of a topic: mosquitto_publish at the run's QoS, retained when the
// durability is transient_local.
//
// wait/poll (no loop thread): mosquitto_publish writes the packet to the socket from the
// caller's thread. A connection without a reader has nobody else to run the loop, so
// write() also runs one non-blocking mosquitto_loop pass when there is something for it
// to do: at QoS 1 (read PUBACKs, which free libmosquitto's in-flight window), when part of
// a large message is still unwritten, and every 100 ms (keepalive).
// listener: mosquitto_publish queues the packet and wakes libmosquitto's loop thread,
// which writes it.
//
// destroy: clears the retained message (transient_local), then waits (at most 10 s)
// until everything published is on the wire or acknowledged.
#ifndef PSBENCH_MQTT_WRITER_H
#define PSBENCH_MQTT_WRITER_H

#include <cstddef>
#include <cstdint>
#include <string>


namespace psbmqtt {

class Connection;

class Writer {
 public:
  Writer(Connection &c, const char *topic);
  ~Writer();

  void write(const void *data, size_t len);
  // ABI drain: true once every publish is on the wire (QoS 0) or acknowledged by the
  // broker (QoS 1); throws psb::sdk::Timeout when timeout_ns passed first, Error when the
  // connection is lost. (No flush(): every write goes out at once.)
  bool drain(int64_t timeout_ns);
  int matched() const { return -1; }  // MQTT does not tell a client who subscribes

 private:
  void publish(const void *data, size_t len, bool retain);

  Connection *const conn_;
  const std::string topic_;
  int qos_ = 0;
  bool retain_ = false, self_driven_ = false;
  size_t max_payload_ = 0;
  int64_t next_service_ns_ = 0;
  bool retained_something_ = false;
};

}  // namespace psbmqtt

#endif
