// One context = one MQTT client connection (libmosquitto) to the broker.
//
// Two ways to run libmosquitto's network loop, chosen by the notify mode:
//   listener:    mosquitto_loop_start(): libmosquitto's own thread reads, writes and
//                calls on_message, from which the reader's listener is called.
//                Publishes are queued and written by that thread.
//   wait, poll:  no thread: take() runs mosquitto_loop() itself (select() with the
//                timeout, then reads/writes), and write() publishes straight onto the
//                socket from the caller's thread.
// In the second case `io` serialises the loop between threads that share the
// connection (the node's open-loop ping takes on one thread and writes on another).
//
// Durability persistent: the session outlives the connection (clean session off, the
// client id fixed for the connection's life), and a connection the broker drops is
// dialled again instead of being lost, by pump() (at most once per kRedialEveryNs,
// non-blocking): in listener mode the driver's own network thread runs it (not
// libmosquitto's, whose reconnect has a 1 s granularity and ends on a TLS EPROTO).
// After the CONNACK the broker resends what it had not had acknowledged; should it
// have lost the session, the readers' subscriptions are made again.
#ifndef PSBENCH_MQTT_CONNECTION_H
#define PSBENCH_MQTT_CONNECTION_H

#include <mosquitto.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbmqtt {

class Reader;
class Writer;

using psb::sdk::now_ns;

class Connection {
 public:
  static constexpr int kMaxReaders = 8;

  // Connects and waits for the broker's CONNACK; throws psb::sdk::Error on failure.
  explicit Connection(const Settings &s);
  // Destroys endpoints left open, disconnects cleanly (bounded), joins the loop thread.
  ~Connection();

  const Settings &settings() const { return s_; }
  bool threaded() const { return threaded_; }
  struct mosquitto *mosq() const {
    return mosq_;
  }

  // --- self-driven loop (wait, poll) ---
  std::mutex io;
  // One mosquitto_loop() pass, at most timeout_ms (0: do not block); the caller holds
  // io. Returns a MOSQ_ERR_* code; on failure the connection is marked lost. Persistent:
  // a failure is the broker going away: MOSQ_ERR_SUCCESS, and while it is away each
  // call dials it when due, else waits (at most timeout_ms) until it is.
  int pump(int timeout_ms);

  // Setup and teardown only (not the timed path): drives the loop (or, threaded, lets
  // the loop thread work) until done() or the connection is lost or timeout_ns passes.
  // Throws psb::sdk::Error (naming what) when done() did not come true.
  void wait_for(const std::function<bool()> &done, int64_t timeout_ns, const char *what);

  // --- the connection's health ---
  bool lost() const { return lost_.load(std::memory_order_acquire); }
  // Between the broker's CONNACK and the connection's end (persistent: until it drops).
  bool connected() const { return connected_.load(std::memory_order_acquire); }
  // Persistent: CONNACKs after the first, and how many of them said the broker had no
  // session for us (it lost it: the subscriptions were made again).
  uint64_t reconnects() const { return reconnects_.load(std::memory_order_relaxed); }
  uint64_t sessions_lost() const { return sessions_lost_.load(std::memory_order_relaxed); }
  // Marks the connection lost (first cause wins) and formats the message.
  void mark_lost(int rc, int errno_value);
  // Throws "lost the connection to the broker at H:P (...)".
  [[noreturn, gnu::cold]] void throw_lost() const;
  // Throws a MOSQ_ERR_* failure of `what`, naming the broker.
  [[noreturn, gnu::cold]] void fail(const char *what, int rc, int errno_value) const;

  // --- subscriptions (create_reader / destroy_reader) ---
  void subscribe(const std::string &topic, int qos);
  // Waits (bounded) for the UNSUBACK: after it the broker sends nothing more on the
  // topic, and nothing is left in flight for the DISCONNECT that close() sends (a
  // packet libmosquitto reads after mosquitto_disconnect() makes it drop the socket
  // without sending the DISCONNECT).
  void unsubscribe(const std::string &topic);

  // --- readers: dispatch from on_message ---
  void add_reader(Reader *r);
  // After it returns, on_message never touches r again.
  void remove_reader(Reader *r);
  int reader_count() const { return reader_count_.load(std::memory_order_acquire); }

  // --- writers: what was published and what libmosquitto has finished with ---
  uint64_t unfinished() const {
    return published_.load(std::memory_order_relaxed) - completed_.load(std::memory_order_acquire);
  }
  void count_publish() { published_.fetch_add(1, std::memory_order_relaxed); }
  void uncount_publish() { published_.fetch_sub(1, std::memory_order_relaxed); }
  // Waits (bounded) until every publish is on the wire (QoS 0) or acknowledged (QoS 1);
  // throws psb::sdk::Timeout when timeout_ns passed first, Error when the connection is lost.
  void flush(int64_t timeout_ns);

  // Endpoints the caller left behind are destroyed by the destructor.
  void link(Writer *w);
  void unlink(Writer *w);

 private:
  void connect();
  void set_up_tls();
  void tear_down();
  void dispatch(const struct mosquitto_message *m);
  // Persistent, wait/poll: the broker is away; dials it when due (io held).
  int redial(int timeout_ms);
  // Persistent, not connected: no socket, or one whose connect failed.
  bool dial_failed() const;
  // Persistent, once connected: a drop is dialled again (before the first CONNACK, a
  // failure is the connection's error, e.g. a TLS handshake's).
  bool redials() const {
    return s_.persistent && connack_.load(std::memory_order_acquire) &&
           !closing_.load(std::memory_order_acquire);
  }
  // Persistent, listener: the network thread, pump() until stopped.
  void run_loop();
  // Persistent: a CONNACK without our session: subscribes every reader's topic again.
  void resubscribe();

  static void on_connect(struct mosquitto *, void *self, int rc, int flags);
  static void on_disconnect(struct mosquitto *, void *self, int rc);
  static void on_subscribe(struct mosquitto *, void *self, int mid, int count, const int *granted);
  static void on_unsubscribe(struct mosquitto *, void *self, int mid);
  static void on_publish(struct mosquitto *, void *self, int mid);
  static void on_message(struct mosquitto *, void *self, const struct mosquitto_message *m);
  // Set while connecting only (libmosquitto formats a debug line per packet when a log
  // callback is set): keeps the first error line, OpenSSL's reason of a failed handshake.
  static void on_log(struct mosquitto *, void *self, int level, const char *text);

  const Settings s_;
  std::string client_id_;
  struct mosquitto *mosq_ = nullptr;
  bool threaded_ = false, loop_started_ = false;
  std::thread loop_thread_;  // persistent, listener (else libmosquitto's own)
  std::atomic<bool> stop_loop_{false}, closing_{false};

  std::atomic<bool> connack_{false}, disconnected_{false};
  std::atomic<int> connack_rc_{0};
  std::atomic<bool> lost_{false};
  std::atomic<bool> connected_{false};
  std::atomic<uint64_t> reconnects_{0}, sessions_lost_{0};
  int64_t next_dial_ns_ = 0;  // wait/poll: when pump() may dial again (io held)
  std::atomic<int> lost_rc_{0}, lost_errno_{0};
  mutable std::mutex log_mu_;
  std::string connect_error_;  // on_log's first error while connecting

  // SUBACK of the subscription create_reader waits for.
  std::atomic<int> suback_mid_{-1}, suback_granted_{-1};
  std::atomic<int> unsuback_mid_{-1};

  // Readers by MQTT topic; `dispatching_` is set while on_message looks at them, so that
  // remove_reader can wait until the loop thread is out.
  std::atomic<Reader *> readers_[kMaxReaders] = {};
  std::atomic<int> reader_count_{0};
  std::atomic<bool> dispatching_{false};

  std::atomic<uint64_t> published_{0}, completed_{0};

  std::mutex endpoints_mu_;
  std::vector<Writer *> writers_;
};

}  // namespace psbmqtt

#endif
