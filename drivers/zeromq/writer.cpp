#include "writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "psbench/sdk.hpp"

namespace psbzmq {

using psb::sdk::fail;

namespace {

// How long zmq_close() lets queued messages (the last samples, the end markers) drain
// to connected subscribers before they are dropped; bounds the wait in close(). ZeroMQ
// cannot tell when a PUB's queue is empty, so there is no ABI drain: the linger is what
// keeps a close from discarding a backlog. 10 s, as the node's default --drain-timeout;
// only a subscriber that is connected but does not read makes close() wait that long.
constexpr int kWriterLingerMs = 10000;

}  // namespace

Writer::Writer(Context &ctx, const char *topic)
    : ctx_(&ctx), topic_(topic), endpoint_(endpoint_for(ctx.settings, topic)) {
  zmq_msg_init(&loan_);
  count_key_ = ctx.settings.conflate ? std::string() : topic_;
  if (ctx.settings.transport == Transport::ipc) ipc_file_ = ipc_path(ctx.settings, topic_);
  try {
    socket_ = zmq_socket(ctx.zctx, ZMQ_XPUB);
    if (socket_ == nullptr) fail("zmq_socket(XPUB): %s", zmq_strerror(zmq_errno()));
    const Settings &s = ctx.settings;
    set_int_option(socket_, ZMQ_SNDHWM, s.sndhwm, "ZMQ_SNDHWM");
    set_int_option(socket_, ZMQ_LINGER, kWriterLingerMs, "ZMQ_LINGER");
    // every subscribe and unsubscribe reaches the application, one per subscriber
    set_int_option(socket_, ZMQ_XPUB_VERBOSER, 1, "ZMQ_XPUB_VERBOSER");
    bind();
    if (s.transport == Transport::inproc) {
      inproc_ = inproc_topic(topic_);
      inproc_->writers.fetch_add(1);
      inproc_->ever_written.store(true);
    }
    created_ns_ = monotonic_ns();
    ctx.writers.insert(this);
  } catch (...) {
    tear_down();
    throw;
  }
}

void Writer::bind() {
  const Settings &s = ctx_->settings;
  for (int attempt = 0;; ++attempt) {
    if (s.transport == Transport::ipc) {
      const std::string dir = ipc_directory(s.run_id);
      if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        fail("cannot create %s for ipc sockets: %s", dir.c_str(), std::strerror(errno));
    }
    if (zmq_bind(socket_, endpoint_.c_str()) == 0) {
      bound_ = true;
      return;
    }
    const int e = zmq_errno();
    // Another process of the run may have removed the (then empty) directory between
    // our mkdir and bind: make it again.
    if (s.transport == Transport::ipc && e == ENOENT && attempt < 3) continue;
    if (e == EADDRINUSE && s.transport == Transport::tcp)
      fail("cannot bind %s for topic %s: port %u is in use (another run or program "
           "holds it). A run's ports are port_base (%u) + %u x (FNV-1a(run id) %% %u) + a "
           "slot per topic; retry with another run id, move the range with --option "
           "port_base=N, or use --transport ipc",
           endpoint_.c_str(), topic_.c_str(), tcp_port(s, topic_), s.port_base, kPortsPerRun,
           kRunBlocks);
    if (e == EADDRINUSE && s.transport == Transport::inproc)
      fail("cannot bind %s: this process already has a writer of topic %s", endpoint_.c_str(),
           topic_.c_str());
    fail("cannot bind %s for topic %s: %s", endpoint_.c_str(), topic_.c_str(), zmq_strerror(e));
  }
}

Writer::~Writer() { tear_down(); }

void Writer::tear_down() {
  ctx_->writers.erase(this);
  if (loan_held_) zmq_msg_close(&loan_);
  if (socket_) zmq_close(socket_);  // queued messages still go out, for up to the linger
  if (!ipc_file_.empty()) {
    // libzmq leaves the socket file of an ipc:// bind behind; remove it, and the run's
    // directory once it is empty (another writer of the run may still have its file).
    if (bound_) unlink(ipc_file_.c_str());
    rmdir(ipc_directory(ctx_->settings.run_id).c_str());
  }
  if (inproc_) inproc_->writers.fetch_sub(1);
}

int Writer::matched() {
  // Drain the subscriptions the XPUB received since the last call: "\x01" + topic per
  // new subscriber, "\x00" + topic per subscriber gone (ZMQ_XPUB_VERBOSER).
  zmq_msg_t m;
  zmq_msg_init(&m);
  while (zmq_msg_recv(&m, socket_, ZMQ_DONTWAIT) >= 0) {
    const auto *d = static_cast<const uint8_t *>(zmq_msg_data(&m));
    const size_t n = zmq_msg_size(&m);
    if (n == count_key_.size() + 1 && (d[0] == 0 || d[0] == 1) &&
        std::memcmp(d + 1, count_key_.data(), count_key_.size()) == 0)
      matched_ += d[0] == 1 ? 1 : -1;
  }
  zmq_msg_close(&m);
  if (inproc_ && matched_ == 0 && !hinted_ && !inproc_->ever_read.load() &&
      monotonic_ns() - created_ns_ > kInprocPeerGraceNs) {
    // The node will give up at its match timeout; say why it cannot match.
    std::fprintf(stderr, "zeromq: %s\n", inproc_alone_message(topic_, "reader").c_str());
    hinted_ = true;
  }
  return matched_;
}

void Writer::send_failed(int error) {
  fail("send on %s: %s", endpoint_.c_str(), zmq_strerror(error));
}

void Writer::write(const void *data, size_t len) {
  // An XPUB never blocks: a subscriber whose queue is at the high-water mark does not
  // get this message, and nothing says so (the receiving node counts it lost).
  for (;;) {
    if (zmq_send(socket_, data, len, ZMQ_DONTWAIT) >= 0) return;
    const int e = zmq_errno();
    if (e != EINTR) send_failed(e);
  }
}

void *Writer::loan(size_t len) {
  if (loan_held_) zmq_msg_close(&loan_);  // a loan never written: give it back
  loan_held_ = false;
  if (zmq_msg_init_size(&loan_, len) != 0) {
    const int e = zmq_errno();
    zmq_msg_init(&loan_);
    fail("zmq_msg_init_size(%zu): %s", len, zmq_strerror(e));
  }
  loan_held_ = true;
  return zmq_msg_data(&loan_);
}

void Writer::write_loan(void *sample, size_t len) {
  if (!loan_held_ || sample != zmq_msg_data(&loan_) || len != zmq_msg_size(&loan_))
    fail("write_loan: not the buffer (or size) the last loan() gave");
  for (;;) {
    // On success the message is handed to ZeroMQ and loan_ is left empty.
    if (zmq_msg_send(&loan_, socket_, ZMQ_DONTWAIT) >= 0) {
      loan_held_ = false;
      return;
    }
    const int e = zmq_errno();
    if (e != EINTR) {
      zmq_msg_close(&loan_);
      zmq_msg_init(&loan_);
      loan_held_ = false;
      send_failed(e);
    }
  }
}

}  // namespace psbzmq
