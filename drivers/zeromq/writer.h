// A writer: one XPUB socket bound to the topic's endpoint. XPUB is PUB (same
// distribution, same drop at the high-water mark) that also hands the subscriptions it
// receives to the application, which is how matched() counts subscribers whose
// subscription has reached this socket.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zmq_context.h"

namespace psbzmq {

// How long zmq_close() lets queued messages (the last samples, the end markers) drain to
// connected subscribers: ZeroMQ has no drain, so this is what keeps a close from
// discarding a backlog. 10 s, the node's default --drain-timeout (README, "Closing").
constexpr int kWriterLingerMs = 10000;

class Writer : public Endpoint {
 public:
  Writer(Context &ctx, const char *topic)
      : Endpoint(ctx, topic, /*writer=*/true),
        // The subscription each of this topic's readers sends (see Reader): its topic
        // name, or "" when readers conflate and subscribe to everything only.
        count_key_(ctx.settings.conflate ? "" : topic) {
    zmq_msg_init(&loan_);  // empty: nothing to free if a throw follows
    socket_ = zmq_socket(ctx.zctx, ZMQ_XPUB);
    if (socket_ == nullptr) fail_zmq("zmq_socket(XPUB)");
    set_int_option(socket_, ZMQ_LINGER, kWriterLingerMs, "ZMQ_LINGER");
    set_int_option(socket_, ZMQ_SNDHWM, ctx.settings.sndhwm, "ZMQ_SNDHWM");
    // every subscribe and unsubscribe reaches the application, one per subscriber
    set_int_option(socket_, ZMQ_XPUB_VERBOSER, 1, "ZMQ_XPUB_VERBOSER");
    bind();  // a failure leaves no empty ipc directory behind
    if (ctx.settings.transport == Transport::inproc) join_inproc();
  }
  ~Writer() override {
    if (loan_held_) zmq_msg_close(&loan_);
    socket_ = nullptr;  // closes it: queued messages still go out, for up to the linger
    if (!ipc_file_.empty()) {
      // libzmq leaves the socket file of an ipc:// bind behind; remove it, and the run's
      // directory once it is empty (another writer of the run may still have its file).
      unlink(ipc_file_.c_str());
      rmdir(ipc_directory(ctx_.settings.run_id).c_str());
    }
  }

  // Subscribers whose subscription has reached this socket.
  int matched() {
    // Drain the subscriptions the XPUB received since the last call: "\x01" + topic per
    // new subscriber, "\x00" + topic per subscriber gone (ZMQ_XPUB_VERBOSER).
    std::string m(count_key_.size() + 1, '\0');
    for (int n; (n = zmq_recv(socket_, m.data(), m.size(), ZMQ_DONTWAIT)) >= 0;)
      if (size_t(n) == m.size() && (m[0] == 0 || m[0] == 1) &&
          m.compare(1, m.npos, count_key_) == 0)
        matched_ += m[0] == 1 ? 1 : -1;
    if (matched_ == 0) hint_if_alone(hinted_);
    return matched_;
  }

  void write(const void *data, size_t len) {
    // An XPUB never blocks: a subscriber whose queue is at the high-water mark does not
    // get this message, and nothing says so (the receiving node counts it lost).
    while (zmq_send(socket_, data, len, ZMQ_DONTWAIT) < 0)
      if (zmq_errno() != EINTR) send_failed();
  }

  void *loan(size_t len) {
    if (loan_held_) zmq_msg_close(&loan_);  // a loan never written: give it back
    loan_held_ = zmq_msg_init_size(&loan_, len) == 0;
    if (!loan_held_) {
      const int e = zmq_errno();
      zmq_msg_init(&loan_);
      fail("zmq_msg_init_size(%zu): %s", len, zmq_strerror(e));
    }
    return zmq_msg_data(&loan_);
  }

  void write_loan(void *sample, size_t len) {
    if (!loan_held_ || sample != zmq_msg_data(&loan_) || len != zmq_msg_size(&loan_))
      fail("write_loan: not the buffer (or size) the last loan() gave");
    // On success the message is handed to ZeroMQ and loan_ is left empty; on failure
    // the loan is given back.
    loan_held_ = false;
    while (zmq_msg_send(&loan_, socket_, ZMQ_DONTWAIT) < 0) {
      if (zmq_errno() == EINTR) continue;
      zmq_msg_close(&loan_);
      zmq_msg_init(&loan_);
      send_failed();
    }
  }

 private:
  void bind() {
    const Settings &s = ctx_.settings;
    const bool ipc = s.transport == Transport::ipc;
    const std::string dir = ipc_directory(s.run_id);
    for (int attempt = 0;; ++attempt) {
      if (ipc && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        fail("cannot create %s for ipc sockets: %s", dir.c_str(), std::strerror(errno));
      if (zmq_bind(socket_, endpoint_.c_str()) == 0) {
        if (ipc) ipc_file_ = ipc_path(s, topic_);
        return;
      }
      const int e = zmq_errno();
      // Another process of the run may have removed the (then empty) directory between
      // our mkdir and bind: make it again.
      if (ipc && e == ENOENT && attempt < 3) continue;
      if (ipc) rmdir(dir.c_str());  // the run's, when empty (this writer may have made it)
      if (e == EADDRINUSE && s.transport == Transport::tcp)
        fail(
            "cannot bind %s for topic %s: port %u is in use (another run or program "
            "holds it). A run's ports are port_base (%u) + %u x (FNV-1a(run id) %% %u) + a "
            "slot per topic; retry with another run id, move the range with --option "
            "port_base=N, or use --transport ipc",
            endpoint_.c_str(), topic_.c_str(), tcp_port(s, topic_), s.port_base, ports_per_run(s),
            kPortSpan / ports_per_run(s));
      if (e == EADDRINUSE && s.transport == Transport::inproc)
        fail("cannot bind %s: this process already has a writer of topic %s", endpoint_.c_str(),
             topic_.c_str());
      fail("cannot bind %s for topic %s: %s", endpoint_.c_str(), topic_.c_str(), zmq_strerror(e));
    }
  }

  [[noreturn, gnu::cold]] void send_failed() {
    fail("send on %s: %s", endpoint_.c_str(), zmq_strerror(zmq_errno()));
  }

  Socket socket_;
  const std::string count_key_;
  std::string ipc_file_;  // ipc: the socket file this writer bound
  int matched_ = 0;
  zmq_msg_t loan_;
  bool loan_held_ = false;
  bool hinted_ = false;
};

}  // namespace psbzmq
