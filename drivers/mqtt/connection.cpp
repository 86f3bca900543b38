#include "connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "psbench/sdk.hpp"
#include "reader.h"
#include "writer.h"

namespace psbmqtt {
namespace {

constexpr int64_t kConnectTimeoutNs = 10'000'000'000;
constexpr int64_t kSubscribeTimeoutNs = 10'000'000'000;
constexpr int64_t kUnsubscribeTimeoutNs = 5'000'000'000;
constexpr int64_t kDisconnectTimeoutNs = 5'000'000'000;
constexpr int kSetupSliceMs = 10;
// Persistent, wait/poll: one connect attempt per 100 ms at most while the broker is away.
constexpr int64_t kRedialEveryNs = 100'000'000;
constexpr int kLoopSliceMs = 100;  // persistent listener: our loop thread's select() timeout

std::once_flag g_lib_once;
std::atomic<unsigned> g_connections{0};

const char *describe(int rc, int errno_value, char *buf, size_t size) {
  if (rc == MOSQ_ERR_ERRNO && errno_value != 0) return strerror_r(errno_value, buf, size);
  return mosquitto_strerror(rc);
}

void sleep_briefly() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

}  // namespace

Connection::Connection(const Settings &s) : s_(s) {
  std::call_once(g_lib_once, [] { mosquitto_lib_init(); });  // never cleaned up: other
                                                             // contexts may still use it
  try {
    connect();
  } catch (...) {
    tear_down();
    throw;
  }
}

void Connection::connect() {
  // Unique per process and context: the broker drops an older session with the same id.
  // Fixed for the connection's life, so a persistent session is found again after a
  // reconnect (and no two connections of a run, in any process, share it).
  client_id_ = "psb-" + s_.run_id + "-" + std::to_string(getpid()) + "-" +
               std::to_string(g_connections.fetch_add(1) + 1);
  mosq_ = mosquitto_new(client_id_.c_str(), !s_.persistent /* clean session */, this);
  if (mosq_ == nullptr) {
    char buf[128];
    psb::sdk::fail("mosquitto_new failed: %s", strerror_r(errno, buf, sizeof buf));
  }
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  mosquitto_int_option(mosq_, MOSQ_OPT_TCP_NODELAY, s_.tcp_nodelay ? 1 : 0);
  if (s_.max_inflight >= 0) mosquitto_int_option(mosq_, MOSQ_OPT_SEND_MAXIMUM, s_.max_inflight);
  mosquitto_connect_with_flags_callback_set(mosq_, on_connect);
  mosquitto_disconnect_callback_set(mosq_, on_disconnect);
  mosquitto_subscribe_callback_set(mosq_, on_subscribe);
  mosquitto_unsubscribe_callback_set(mosq_, on_unsubscribe);
  mosquitto_publish_callback_set(mosq_, on_publish);
  mosquitto_message_callback_set(mosq_, on_message);
  mosquitto_log_callback_set(mosq_, on_log);
  if (s_.tls.on) set_up_tls();

  errno = 0;
  int rc = mosquitto_connect(mosq_, s_.broker.host.c_str(), s_.broker.port, s_.keepalive_s);
  if (rc != MOSQ_ERR_SUCCESS) {
    const int connect_errno = errno;
    char buf[128];
    std::lock_guard<std::mutex> lock(log_mu_);
    if (!connect_error_.empty())  // the TLS handshake failed: OpenSSL's reason
      psb::sdk::fail("cannot connect to the broker at %s with TLS: %s (%s)", s_.broker.text.c_str(),
                     describe(rc, connect_errno, buf, sizeof buf), connect_error_.c_str());
    // No OpenSSL reason was logged: a protocol error, or the socket's EPROTO (OpenSSL's
    // "unexpected eof": the broker closed the handshake; seen on a busy machine).
    const bool handshake_cut =
        rc == MOSQ_ERR_PROTOCOL || (rc == MOSQ_ERR_ERRNO && connect_errno == EPROTO);
    if (s_.tls.on && handshake_cut)
      psb::sdk::fail(
          "cannot connect to the broker at %s with TLS: %s (the handshake ended without "
          "OpenSSL's reason: under TLS 1.3 a broker that refuses this client's certificate "
          "may close the connection before its alert is read)",
          s_.broker.text.c_str(), describe(rc, connect_errno, buf, sizeof buf));
    psb::sdk::fail(
        "cannot connect to the broker at %s%s: %s (is a broker listening there? "
        "psbench starts mosquitto itself and sets option broker)",
        s_.broker.text.c_str(), s_.tls.on ? " with TLS" : "",
        describe(rc, connect_errno, buf, sizeof buf));
  }
  wait_for([this] { return connack_.load(std::memory_order_acquire); }, kConnectTimeoutNs,
           "CONNACK");
  mosquitto_log_callback_set(mosq_, nullptr);
  if (connack_rc_.load() != 0)
    psb::sdk::fail("the broker at %s refused the connection: %s", s_.broker.text.c_str(),
                   mosquitto_connack_string(connack_rc_.load()));
  if (s_.notify == PSB_NOTIFY_LISTENER && s_.persistent) {
    // Our own network thread, not libmosquitto's: its thread ends for good when a TLS
    // connection ends with EPROTO (OpenSSL's "unexpected eof", a broker killed), and
    // dials again only every whole second. Publishes are queued for it, as for libmosquitto's.
    mosquitto_threaded_set(mosq_, true);
    loop_thread_ = std::thread([this] { run_loop(); });
    threaded_ = loop_started_ = true;
  } else if (s_.notify == PSB_NOTIFY_LISTENER) {
    rc = mosquitto_loop_start(mosq_);
    if (rc != MOSQ_ERR_SUCCESS)
      psb::sdk::fail("cannot start libmosquitto's network thread: %s", mosquitto_strerror(rc));
    threaded_ = loop_started_ = true;
  }
}

void Connection::run_loop() {
  while (!stop_loop_.load(std::memory_order_acquire) && !lost()) pump(kLoopSliceMs);
}

// Mutual TLS: the broker's certificate must chain to ca.pem and name the address
// connected to (libmosquitto checks the host against its SAN, IP addresses included,
// unless told it is insecure, which it never is here); ours is cert.pem + key.pem.
void Connection::set_up_tls() {
  psb::sdk::require_files(s_.tls);
  int rc = mosquitto_tls_set(mosq_, s_.tls.ca.c_str(), nullptr, s_.tls.cert.c_str(),
                             s_.tls.key.c_str(), nullptr);
  if (rc == MOSQ_ERR_SUCCESS)
    rc = mosquitto_tls_opts_set(mosq_, 1 /* SSL_VERIFY_PEER */, nullptr, nullptr);
  if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_tls_insecure_set(mosq_, false);
  if (rc != MOSQ_ERR_SUCCESS) {
    std::lock_guard<std::mutex> lock(log_mu_);
    psb::sdk::fail("security=tls: cannot load the certificates of %s/ into libmosquitto: %s%s%s",
                   s_.tls.ca.substr(0, s_.tls.ca.rfind('/')).c_str(), mosquitto_strerror(rc),
                   connect_error_.empty() ? "" : ": ", connect_error_.c_str());
  }
}

void Connection::on_log(struct mosquitto *, void *self, int level, const char *text) {
  if (level != MOSQ_LOG_ERR || text == nullptr) return;
  auto *c = static_cast<Connection *>(self);
  std::lock_guard<std::mutex> lock(c->log_mu_);
  if (c->connect_error_.empty()) c->connect_error_ = text;
}

Connection::~Connection() { tear_down(); }

void Connection::tear_down() {
  // Endpoints the caller left open, readers first (no callback into them from here on).
  for (auto &slot : readers_)
    if (Reader *r = slot.load()) delete r;
  std::vector<Writer *> left;
  {
    std::lock_guard<std::mutex> lock(endpoints_mu_);
    left = writers_;
  }
  for (Writer *w : left) delete w;
  if (mosq_ == nullptr) return;

  // DISCONNECT, so the broker ends the session at once (it logs "disconnected", not
  // "closed its connection"). Also sets libmosquitto's state so its thread stops.
  // No socket (persistent, the broker away): nothing to send, nobody to wait for.
  closing_.store(true, std::memory_order_release);  // no more dialling
  const bool sent = mosquitto_disconnect(mosq_) != MOSQ_ERR_NO_CONN;
  auto done = [this, sent] { return !sent || disconnected_.load(std::memory_order_acquire); };
  const int64_t deadline = now_ns() + kDisconnectTimeoutNs;
  while (!done() && now_ns() < deadline) {
    if (loop_started_) {
      sleep_briefly();
    } else {
      std::lock_guard<std::mutex> lock(io);
      if (mosquitto_loop(mosq_, kSetupSliceMs, 1) != MOSQ_ERR_SUCCESS) break;  // closed
    }
  }
  if (loop_started_) {
    if (!done()) {
      // The broker takes nothing more (gone, or not reading): end the socket so that the
      // loop thread sees an error and, the state being "disconnected", returns.
      const int fd = mosquitto_socket(mosq_);
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
    }
    if (loop_thread_.joinable()) {
      stop_loop_.store(true, std::memory_order_release);
      loop_thread_.join();
    } else {
      mosquitto_loop_stop(mosq_, false);
    }
  }
  mosquitto_destroy(mosq_);
}

int Connection::pump(int timeout_ms) {
  if (redials() && !connected() && dial_failed()) return redial(timeout_ms);
  const int rc = mosquitto_loop(mosq_, timeout_ms, 1);
  if (rc == MOSQ_ERR_SUCCESS) return rc;
  // Persistent: the broker went away (libmosquitto closed the socket and called
  // on_disconnect); the next pass dials it again.
  if (redials() && !lost()) return MOSQ_ERR_SUCCESS;
  mark_lost(rc, errno);
  return rc;
}

bool Connection::dial_failed() const {
  const int fd = mosquitto_socket(mosq_);
  if (fd < 0) return true;
  // libmosquitto 2.0 does not notice a refused non-blocking connect under TLS (it takes
  // OpenSSL's SSL_ERROR_SYSCALL for "try again" and waits for ever): the socket says.
  tcp_info info{};
  socklen_t size = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  return info.tcpi_state != TCP_ESTABLISHED && info.tcpi_state != TCP_SYN_SENT;
}

int Connection::redial(int timeout_ms) {
  const int64_t now = now_ns();
  if (now < next_dial_ns_) {
    const int64_t wait_ns = std::min(next_dial_ns_ - now, int64_t(timeout_ms) * 1'000'000);
    if (wait_ns > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait_ns));
    return MOSQ_ERR_SUCCESS;
  }
  next_dial_ns_ = now + kRedialEveryNs;
  // Non-blocking: a refused connect fails at once; one under way is finished by the next
  // mosquitto_loop passes, which then send CONNECT and read the CONNACK.
  mosquitto_reconnect_async(mosq_);
  return MOSQ_ERR_SUCCESS;
}

void Connection::wait_for(const std::function<bool()> &done, int64_t timeout_ns, const char *what) {
  const int64_t deadline = now_ns() + timeout_ns;
  while (!done()) {
    if (lost()) throw_lost();
    if (now_ns() >= deadline)
      psb::sdk::fail("no %s from the broker at %s within %lld s", what, s_.broker.text.c_str(),
                     (long long)(timeout_ns / 1'000'000'000));
    if (loop_started_) {
      sleep_briefly();
    } else {
      std::lock_guard<std::mutex> lock(io);
      pump(kSetupSliceMs);
    }
  }
}

void Connection::mark_lost(int rc, int errno_value) {
  if (lost_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(endpoints_mu_);  // first cause wins
  if (lost_.load(std::memory_order_relaxed)) return;
  lost_rc_.store(rc, std::memory_order_relaxed);
  lost_errno_.store(errno_value, std::memory_order_relaxed);
  lost_.store(true, std::memory_order_release);
}

void Connection::throw_lost() const {
  char buf[128];
  const int rc = lost_rc_.load(std::memory_order_relaxed);
  std::string detail = describe(rc, lost_errno_.load(std::memory_order_relaxed), buf, sizeof buf);
  {
    // A failed TLS handshake shows here: OpenSSL's reason, as libmosquitto logged it.
    std::lock_guard<std::mutex> lock(log_mu_);
    if (!connect_error_.empty()) detail += "; " + connect_error_;
  }
  psb::sdk::fail("lost the connection to the broker at %s%s (%s)", s_.broker.text.c_str(),
                 s_.tls.on && !connack_.load() ? " (TLS) before its CONNACK" : "", detail.c_str());
}

void Connection::fail(const char *what, int rc, int errno_value) const {
  char buf[128];
  psb::sdk::fail("%s through the broker at %s failed: %s", what, s_.broker.text.c_str(),
                 describe(rc, errno_value, buf, sizeof buf));
}

void Connection::subscribe(const std::string &topic, int qos) {
  int mid = -1;
  errno = 0;
  const int rc = mosquitto_subscribe(mosq_, &mid, topic.c_str(), qos);
  if (rc != MOSQ_ERR_SUCCESS) fail("subscribe", rc, errno);
  // The SUBACK: from then on the broker routes every publish on the topic to us.
  wait_for([this, mid] { return suback_mid_.load(std::memory_order_acquire) == mid; },
           kSubscribeTimeoutNs, "SUBACK");
  const int granted = suback_granted_.load(std::memory_order_relaxed);
  if (granted < 0 || granted > 2)
    psb::sdk::fail("the broker at %s refused the subscription to %s (SUBACK code 0x%x)",
                   s_.broker.text.c_str(), topic.c_str(), unsigned(granted));
  if (granted < qos)
    psb::sdk::fail(
        "the broker at %s granted QoS %d on %s, below the QoS %d that "
        "reliability reliable needs",
        s_.broker.text.c_str(), granted, topic.c_str(), qos);
}

void Connection::unsubscribe(const std::string &topic) {
  int mid = -1;
  if (mosquitto_unsubscribe(mosq_, &mid, topic.c_str()) != MOSQ_ERR_SUCCESS) return;
  try {  // teardown: a broker that does not answer is not waited for long
    wait_for([this, mid] { return unsuback_mid_.load(std::memory_order_acquire) == mid; },
             kUnsubscribeTimeoutNs, "UNSUBACK");
  } catch (const std::exception &) {
  }
}

void Connection::add_reader(Reader *r) {
  std::lock_guard<std::mutex> lock(endpoints_mu_);
  for (auto &slot : readers_) {
    Reader *other = slot.load();
    if (other != nullptr && other->topic() == r->topic())
      psb::sdk::fail(
          "this context already has a reader on %s (one subscription per "
          "topic and connection)",
          r->topic().c_str());
  }
  for (auto &slot : readers_) {
    if (slot.load() == nullptr) {
      slot.store(r, std::memory_order_seq_cst);
      reader_count_.fetch_add(1);
      return;
    }
  }
  psb::sdk::fail("at most %d readers per context", kMaxReaders);
}

void Connection::remove_reader(Reader *r) {
  {
    std::lock_guard<std::mutex> lock(endpoints_mu_);
    for (auto &slot : readers_) {
      if (slot.load() == r) {
        slot.store(nullptr, std::memory_order_seq_cst);
        reader_count_.fetch_sub(1);
      }
    }
  }
  // on_message sets dispatching_ before it looks at the slots (both seq_cst): either it
  // saw the slot empty, or we see it still busy and wait until it is out.
  while (dispatching_.load(std::memory_order_seq_cst)) std::this_thread::yield();
}

void Connection::link(Writer *w) {
  std::lock_guard<std::mutex> lock(endpoints_mu_);
  writers_.push_back(w);
}

void Connection::unlink(Writer *w) {
  std::lock_guard<std::mutex> lock(endpoints_mu_);
  writers_.erase(std::remove(writers_.begin(), writers_.end(), w), writers_.end());
}

void Connection::flush(int64_t timeout_ns) {
  const int64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    if (lost()) throw_lost();
    const bool pending =
        completed_.load(std::memory_order_acquire) < published_.load(std::memory_order_relaxed) ||
        mosquitto_want_write(mosq_);
    if (!pending) return;
    if (now_ns() >= deadline) {
      char text[sizeof(psb_error::message)];
      std::snprintf(text, sizeof text,
                    "messages still unsent or unacknowledged by the broker at %s after %lld ms",
                    s_.broker.text.c_str(), (long long)(timeout_ns / 1'000'000));
      throw psb::sdk::Timeout(text);
    }
    if (loop_started_) {
      sleep_briefly();
    } else {
      std::lock_guard<std::mutex> lock(io);
      pump(kSetupSliceMs);
    }
  }
}

void Connection::on_connect(struct mosquitto *, void *self, int rc, int flags) {
  auto *c = static_cast<Connection *>(self);
  if (c->connack_.load(std::memory_order_acquire)) {  // persistent: a reconnect
    if (rc != 0) {                                    // refused now: nothing a retry would change
      c->mark_lost(MOSQ_ERR_CONN_REFUSED, 0);
      return;
    }
    c->reconnects_.fetch_add(1, std::memory_order_relaxed);
    if ((flags & 1) == 0) {  // session present: no (the broker lost it)
      c->sessions_lost_.fetch_add(1, std::memory_order_relaxed);
      c->resubscribe();
    }
    c->connected_.store(true, std::memory_order_release);
    return;
  }
  c->connack_rc_.store(rc, std::memory_order_relaxed);
  c->connected_.store(rc == 0, std::memory_order_release);
  c->connack_.store(true, std::memory_order_release);
}

// From on_connect (libmosquitto queues the SUBSCRIBEs and writes them after the callback);
// the SUBACKs are not waited for.
void Connection::resubscribe() {
  std::lock_guard<std::mutex> lock(endpoints_mu_);
  for (auto &slot : readers_)
    if (Reader *r = slot.load()) mosquitto_subscribe(mosq_, nullptr, r->topic().c_str(), s_.qos);
}

void Connection::on_disconnect(struct mosquitto *mosq, void *self, int rc) {
  auto *c = static_cast<Connection *>(self);
  c->connected_.store(false, std::memory_order_release);
  if (rc != 0 && c->redials()) return;  // dialled again: libmosquitto's thread, pump()
  if (rc != 0) {  // not our DISCONNECT: the broker went away or the socket failed
    c->mark_lost(rc, errno);
    // Without this, libmosquitto's thread would reconnect, and a run would go on with
    // whatever it lost in between. "disconnected" makes mosquitto_loop_forever return.
    if (c->loop_started_) mosquitto_disconnect(mosq);
  }
  c->disconnected_.store(true, std::memory_order_release);
}

void Connection::on_subscribe(struct mosquitto *, void *self, int mid, int count,
                              const int *granted) {
  auto *c = static_cast<Connection *>(self);
  c->suback_granted_.store(count > 0 ? granted[0] : 0x80, std::memory_order_relaxed);
  c->suback_mid_.store(mid, std::memory_order_release);
}

void Connection::on_unsubscribe(struct mosquitto *, void *self, int mid) {
  static_cast<Connection *>(self)->unsuback_mid_.store(mid, std::memory_order_release);
}

void Connection::on_publish(struct mosquitto *, void *self, int) {
  // QoS 0: the packet is on the wire; QoS 1: the broker's PUBACK arrived.
  static_cast<Connection *>(self)->completed_.fetch_add(1, std::memory_order_release);
}

void Connection::on_message(struct mosquitto *, void *self, const struct mosquitto_message *m) {
  static_cast<Connection *>(self)->dispatch(m);
}

void Connection::dispatch(const struct mosquitto_message *m) {
  dispatching_.store(true, std::memory_order_seq_cst);
  for (auto &slot : readers_) {
    Reader *r = slot.load(std::memory_order_seq_cst);
    if (r != nullptr && std::strcmp(r->topic().c_str(), m->topic) == 0) {
      r->deliver(m->payload, size_t(m->payloadlen));
      break;
    }
  }
  dispatching_.store(false, std::memory_order_release);
}

}  // namespace psbmqtt
