#include "reader.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace psbzmq {

using psb::sdk::fail;

namespace {

constexpr int kListenerSliceMs = 100;  // how soon destroy_reader() stops the listener
constexpr int kReconnectMs = 10;       // retry a writer not bound yet every 10 ms

}  // namespace

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
    : ctx_(&ctx), topic_(topic), endpoint_(endpoint_for(ctx.settings, topic)), on_data_(on_data) {
  zmq_msg_init(&msg_);
  try {
    setup();
    if (on_data) {
      set_receive_timeout_ms(kListenerSliceMs);
      try {
        listener_ = std::thread([this] { listen(); });
      } catch (const std::exception &e) {
        fail("cannot start the listener thread: %s", e.what());
      }
    }
    ctx.readers.insert(this);
  } catch (...) {
    tear_down();
    throw;
  }
}

void Reader::setup() {
  const Settings &s = ctx_->settings;
  socket_ = zmq_socket(ctx_->zctx, ZMQ_SUB);
  if (socket_ == nullptr) fail("zmq_socket(SUB): %s", zmq_strerror(zmq_errno()));
  set_int_option(socket_, ZMQ_LINGER, 0, "ZMQ_LINGER");
  if (s.conflate) {
    // keep_last:1: the SUB's queue holds the newest message only. ZMQ_CONFLATE also
    // conflates the subscriptions the SUB sends, so it sends exactly one.
    set_int_option(socket_, ZMQ_CONFLATE, 1, "ZMQ_CONFLATE");
  } else {
    set_int_option(socket_, ZMQ_RCVHWM, s.rcvhwm, "ZMQ_RCVHWM");
  }
  if (s.transport != Transport::inproc)
    set_int_option(socket_, ZMQ_RECONNECT_IVL, kReconnectMs, "ZMQ_RECONNECT_IVL");
  // "" first: the SUB sends its subscriptions in this order (trie order, "" at the
  // root), so when the writer sees the marker, delivery to this reader is already on.
  if (zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, "", 0) != 0 ||
      (!s.conflate && zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, topic_.data(), topic_.size()) != 0))
    fail("ZMQ_SUBSCRIBE: %s", zmq_strerror(zmq_errno()));
  if (s.transport != Transport::inproc) start_monitor();
  if (s.transport == Transport::inproc) {
    inproc_ = inproc_topic(topic_);
    inproc_->ever_read.store(true);
  }
  // Asynchronous: a writer not bound yet is retried (tcp, ipc) or met when it binds
  // (inproc).
  if (zmq_connect(socket_, endpoint_.c_str()) != 0)
    fail("cannot connect to %s for topic %s: %s", endpoint_.c_str(), topic_.c_str(),
         zmq_strerror(zmq_errno()));
  created_ns_ = monotonic_ns();
}

void Reader::start_monitor() {
  // A name never used before in this process: a closed monitor's inproc endpoint is
  // unregistered asynchronously, so a reader's address could still be taken.
  static std::atomic<unsigned long> monitors{0};
  char name[96];
  std::snprintf(name, sizeof name, "inproc://psbench-zeromq-monitor-%lu", monitors.fetch_add(1));
  if (zmq_socket_monitor(socket_, name, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
    fail("zmq_socket_monitor: %s", zmq_strerror(zmq_errno()));
  monitoring_ = true;
  monitor_ = zmq_socket(ctx_->zctx, ZMQ_PAIR);
  if (monitor_ == nullptr) fail("socket monitor: %s", zmq_strerror(zmq_errno()));
  set_int_option(monitor_, ZMQ_LINGER, 0, "ZMQ_LINGER");
  if (zmq_connect(monitor_, name) != 0) fail("socket monitor: %s", zmq_strerror(zmq_errno()));
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() {
  ctx_->readers.erase(this);
  if (listener_.joinable()) {
    stop_.store(true);
    listener_.join();  // within one kListenerSliceMs
  }
  if (monitoring_) zmq_socket_monitor(socket_, nullptr, 0);
  if (monitor_) zmq_close(monitor_);
  zmq_msg_close(&msg_);
  if (socket_) zmq_close(socket_);
}

int Reader::matched() {
  if (inproc_) {
    // inproc pipes exist as soon as both sockets do: the writers bound in this process.
    const int n = inproc_->writers.load();
    if (n == 0 && !hinted_ && inproc_writer_never_came()) {
      // The node will give up at its match timeout; say why it cannot match.
      std::fprintf(stderr, "zeromq: %s\n", inproc_alone_message(topic_, "writer").c_str());
      hinted_ = true;
    }
    return n;
  }
  // A SUB connects to one endpoint, so one writer at most: connected after the ZMTP
  // handshake (the SUB sends its subscriptions right behind it), not after a disconnect.
  zmq_msg_t m;
  zmq_msg_init(&m);
  while (zmq_msg_recv(&m, monitor_, ZMQ_DONTWAIT) >= 0) {
    // First frame: uint16 event, uint32 value; second frame: the endpoint.
    uint16_t event = 0;
    if (zmq_msg_size(&m) >= sizeof event) std::memcpy(&event, zmq_msg_data(&m), sizeof event);
    while (zmq_msg_more(&m) && zmq_msg_recv(&m, monitor_, ZMQ_DONTWAIT) >= 0) {
    }
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) connected_ = 1;
    if (event == ZMQ_EVENT_DISCONNECTED) connected_ = 0;
  }
  zmq_msg_close(&m);
  return connected_;
}

void Reader::set_receive_timeout_ms(int ms) {
  set_int_option(socket_, ZMQ_RCVTIMEO, ms, "ZMQ_RCVTIMEO");
  receive_timeout_ms_ = ms;
}

bool Reader::inproc_writer_never_came() const {
  return !inproc_->ever_written.load(std::memory_order_relaxed) &&
         monotonic_ns() - created_ns_ > kInprocPeerGraceNs;
}

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  int flags = ZMQ_DONTWAIT;
  if (timeout_ns > 0) {
    flags = 0;
    // ZMQ_RCVTIMEO has millisecond steps: round up. Set only when it changes.
    const int64_t ms = (timeout_ns + 999'999) / 1'000'000;
    const int want = ms > INT_MAX ? INT_MAX : int(ms);
    if (want != receive_timeout_ms_) set_receive_timeout_ms(want);
  }
  // Receiving into msg_ frees the previous sample first.
  if (zmq_msg_recv(&msg_, socket_, flags) >= 0) {
    data = zmq_msg_data(&msg_);
    len = zmq_msg_size(&msg_);
    return true;
  }
  const int e = zmq_errno();
  if (e == EAGAIN || e == EINTR) {
    if (inproc_ && !inproc_writer_seen_) {
      if (inproc_->ever_written.load(std::memory_order_relaxed)) {
        inproc_writer_seen_ = true;
      } else if (inproc_writer_never_came()) {
        throw psb::sdk::Error(inproc_alone_message(topic_, "writer"));
      }
    }
    return false;
  }
  fail("receive on %s: %s", endpoint_.c_str(), zmq_strerror(e));
}

void Reader::release() {
  zmq_msg_close(&msg_);
  zmq_msg_init(&msg_);
}

void Reader::listen() {
  zmq_msg_t m;
  zmq_msg_init(&m);
  bool hinted = false;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (zmq_msg_recv(&m, socket_, 0) >= 0) {
      on_data_(zmq_msg_data(&m), zmq_msg_size(&m));
      continue;
    }
    const int e = zmq_errno();
    if (e == EAGAIN || e == EINTR) {
      if (inproc_ && !hinted && inproc_writer_never_came()) {
        // No way to fail the run from here: say why nothing will come.
        std::fprintf(stderr, "zeromq: %s\n", inproc_alone_message(topic_, "writer").c_str());
        hinted = true;
      }
      continue;
    }
    std::fprintf(stderr, "zeromq: listener on %s stopped: %s\n", endpoint_.c_str(), zmq_strerror(e));
    break;
  }
  zmq_msg_close(&m);
}

}  // namespace psbzmq
