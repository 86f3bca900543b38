// A reader: one SUB socket connected to the topic's endpoint (across hosts, to the topic's
// port on every peer address). It subscribes to every message (""), then to its topic name
// as a marker the writer's XPUB counts (see Writer::matched); with history keep_last:1
// (ZMQ_CONFLATE) to "" only.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "zmq_context.h"

namespace psbzmq {

constexpr int kListenerSliceMs = 100;  // how soon destroy_reader() stops the listener
constexpr int kReconnectMs = 10;       // retry a writer not bound yet every 10 ms

class Reader : public Endpoint {
 public:
  // A listener given: listener mode (a thread of the driver's calls it).
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
      : Endpoint(ctx, topic, /*writer=*/false),
        connect_to_(endpoints_to_connect(ctx.settings, topic_)),
        on_data_(on_data) {
    zmq_msg_init(&msg_);  // empty: nothing to free if a throw follows
    const Settings &s = ctx.settings;
    socket_ = zmq_socket(ctx.zctx, ZMQ_SUB);
    if (socket_ == nullptr) fail_zmq("zmq_socket(SUB)");
    set_int_option(socket_, ZMQ_LINGER, 0, "ZMQ_LINGER");
    // keep_last:1: the SUB's queue holds the newest message only. ZMQ_CONFLATE also
    // conflates the subscriptions the SUB sends, so it sends exactly one.
    if (s.conflate)
      set_int_option(socket_, ZMQ_CONFLATE, 1, "ZMQ_CONFLATE");
    else
      set_int_option(socket_, ZMQ_RCVHWM, s.rcvhwm, "ZMQ_RCVHWM");
    // "" first: the SUB sends its subscriptions in this order (trie order, "" at the
    // root), so when the writer sees the marker, delivery to this reader is already on.
    if (zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, "", 0) != 0 ||
        (!s.conflate && zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, topic_.data(), topic_.size()) != 0))
      fail_zmq("ZMQ_SUBSCRIBE");
    if (s.transport == Transport::inproc) {
      join_inproc();
    } else {
      set_int_option(socket_, ZMQ_RECONNECT_IVL, kReconnectMs, "ZMQ_RECONNECT_IVL");
      start_monitor();
    }
    // Asynchronous: a writer not bound yet is retried (tcp, ipc) or met when it binds (inproc).
    for (const std::string &e : connect_to_)
      if (zmq_connect(socket_, e.c_str()) != 0)
        fail("cannot connect to %s for topic %s: %s", e.c_str(), topic_.c_str(),
             zmq_strerror(zmq_errno()));
    if (on_data) {
      set_receive_timeout_ms(kListenerSliceMs);
      listener_.start(on_data_, [this] { listen(); });
    }
  }
  ~Reader() override {
    listener_.stop();  // within one kListenerSliceMs
    if (monitor_) zmq_socket_monitor(socket_, nullptr, 0);
    zmq_msg_close(&msg_);
  }  // then the monitor's PAIR and the SUB close

  // The writer connected: 1 or 0.
  int matched() {
    if (inproc_) {
      // inproc pipes exist as soon as both sockets do: the writers bound in this process.
      const int n = inproc_->writers.load();
      if (n == 0) hint_if_alone(hinted_);
      return n;
    }
    // The endpoints with a writer: connected after the ZMTP handshake (the SUB sends its
    // subscriptions right behind it), not after a disconnect. A topic has one writer, so
    // at most one.
    // Two frames an event: uint16 event and uint32 value, then the endpoint (an ipc path
    // fits sun_path, so 256 bytes hold any of ours).
    uint16_t event[3];
    char endpoint[256];
    while (zmq_recv(monitor_, event, sizeof event, ZMQ_DONTWAIT) >= 0) {
      const int n = zmq_recv(monitor_, endpoint, sizeof endpoint, ZMQ_DONTWAIT);
      const std::string e(endpoint, size_t(std::clamp(n, 0, int(sizeof endpoint))));
      if (event[0] == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) connected_.insert(e);
      if (event[0] == ZMQ_EVENT_DISCONNECTED) connected_.erase(e);
    }
    // Across hosts: the writer is found, so the SUB stops retrying the other peers every
    // kReconnectMs (connection attempts on the run's network while it measures).
    if (!connected_.empty() && connect_to_.size() > 1)
      for (const std::string &e : std::exchange(connect_to_, {}))
        if (connected_.count(e) == 0) zmq_disconnect(socket_, e.c_str());
    return int(connected_.size());
  }

  bool take(int64_t timeout_ns, const void *&data, size_t &len) {
    // ZMQ_RCVTIMEO has millisecond steps: round up.
    if (timeout_ns > 0) set_receive_timeout_ms(psb::sdk::ms_rounded_up(timeout_ns));
    const int flags = timeout_ns > 0 ? 0 : ZMQ_DONTWAIT;
    // Receiving into msg_ frees the previous sample first.
    if (zmq_msg_recv(&msg_, socket_, flags) >= 0) {
      data = zmq_msg_data(&msg_);
      len = zmq_msg_size(&msg_);
      return true;
    }
    if (!timed_out()) fail("receive on %s: %s", endpoint_.c_str(), zmq_strerror(zmq_errno()));
    if (inproc_ && alone()) throw psb::sdk::Error(alone_message());
    return false;
  }

  void release() {
    zmq_msg_close(&msg_);
    zmq_msg_init(&msg_);
  }

 private:
  void start_monitor() {
    // A name never used before in this process: a closed monitor's inproc endpoint is
    // unregistered asynchronously, so a reader's address could still be taken.
    static std::atomic<unsigned long> monitors{0};
    const std::string name =
        "inproc://psbench-zeromq-monitor-" + std::to_string(monitors.fetch_add(1));
    if (zmq_socket_monitor(socket_, name.c_str(),
                           ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
      fail_zmq("zmq_socket_monitor");
    monitor_ = zmq_socket(ctx_.zctx, ZMQ_PAIR);
    if (monitor_ == nullptr) fail_zmq("socket monitor");
    set_int_option(monitor_, ZMQ_LINGER, 0, "ZMQ_LINGER");
    if (zmq_connect(monitor_, name.c_str()) != 0) fail_zmq("socket monitor");
  }

  void set_receive_timeout_ms(int ms) {  // set only when it changes
    if (ms == receive_timeout_ms_) return;
    set_int_option(socket_, ZMQ_RCVTIMEO, ms, "ZMQ_RCVTIMEO");
    receive_timeout_ms_ = ms;
  }

  // After a failed receive: it only found nothing within its time (or was interrupted).
  static bool timed_out() { return zmq_errno() == EAGAIN || zmq_errno() == EINTR; }

  // Listener mode: the only user of the socket once it runs.
  void listen() {
    bool hinted = false;
    while (!listener_.stopping()) {
      if (zmq_msg_recv(&msg_, socket_, 0) >= 0)
        on_data_(zmq_msg_data(&msg_), zmq_msg_size(&msg_));
      else if (timed_out())
        hint_if_alone(hinted);
      else
        return on_data_.error("listener on %s stopped: %s", endpoint_.c_str(),
                              zmq_strerror(zmq_errno()));
    }
  }

  Socket socket_;
  Socket monitor_;  // PAIR receiving the SUB's socket events (tcp, ipc; the SUB's close ends them)
  zmq_msg_t msg_;   // the sample take() handed out, alive until release() or the next take()
  int receive_timeout_ms_ = -2;  // ZMQ_RCVTIMEO now in force; -2 = not set yet
  // The endpoints connected to (tcp across hosts: every peer's, until the writer is found;
  // then none, as the SUB keeps only the writer's).
  std::vector<std::string> connect_to_;
  std::set<std::string> connected_;  // tcp, ipc: those with a ZMTP handshake done
  bool hinted_ = false;
  const psb::sdk::Listener on_data_;  // listener mode
  psb::sdk::ListenerThread listener_;
};

}  // namespace psbzmq
