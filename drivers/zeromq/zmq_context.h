// A driver context: the run's settings and the ZeroMQ context its sockets live in (its
// own per driver context for tcp and ipc, one per process for inproc: README,
// "Transports"), and what the writer and reader headers share.
#pragma once
#include <zmq.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "psbench/sdk.hpp"
#include "settings.h"

namespace psbzmq {

using psb::sdk::fail;

// Throws psb::sdk::Error "<what>: <libzmq's last error>".
[[noreturn, gnu::cold]] inline void fail_zmq(const char *what) {
  fail("%s: %s", what, zmq_strerror(zmq_errno()));
}

// Sets an int socket option; throws psb::sdk::Error if it fails.
inline void set_int_option(void *socket, int option, int value, const char *name) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
    fail("zmq_setsockopt(%s=%d): %s", name, value, zmq_strerror(zmq_errno()));
}

// A zmq socket, closed with its owner (zmq_close: its linger runs on in libzmq).
using Socket = psb::sdk::Owned<void *, &zmq_close>;

// A zmq context of its own. The SDK destroys the endpoints a caller left open before
// their Context: zmq_ctx_term() would wait for their sockets forever.
struct ZmqContext {
  ZmqContext() {
    if ((handle = zmq_ctx_new()) == nullptr) fail_zmq("zmq_ctx_new");
  }
  ~ZmqContext() { zmq_ctx_term(handle); }  // every socket is closed by now (linger bounded)
  void *handle;
};

// What the inproc endpoints of this process share: inproc:// endpoints only meet inside
// one zmq context, and a registry of the writers and readers per topic lets an endpoint
// tell a peer that is merely late from one that can never come (it lives in another
// process). mu guards it; it is never taken on the timed path.
struct InprocProcess {
  struct Topic {  // never erased, so an endpoint may keep a pointer to it
    std::atomic<int> writers{0};
    std::atomic<bool> ever_written{false}, ever_read{false};
  };
  psb::sdk::PerProcess<int, ZmqContext> zctx;  // one, key 0, while an inproc context is open
  std::mutex mu;
  std::map<std::string, Topic> topics;
  static InprocProcess &get() {
    // Never destroyed: an endpoint (or its listener thread) may outlive static destruction.
    static InprocProcess &process = *new InprocProcess;
    return process;
  }
};

class Context {
 public:
  explicit Context(const psb_config &cfg)
      : settings(psb::sdk::parse_or_throw(cfg, parse_settings)),
        own(settings.transport == Transport::inproc ? nullptr : std::make_unique<ZmqContext>()),
        inproc(own ? decltype(inproc)()
                   : InprocProcess::get().zctx.acquire(
                         0, [] { return std::make_unique<ZmqContext>(); })),
        zctx(own ? own->handle : inproc->handle) {}

  const Settings settings;
  const std::unique_ptr<ZmqContext> own;                      // tcp, ipc
  const psb::sdk::PerProcess<int, ZmqContext>::Lease inproc;  // inproc: the process's one
  void *const zctx;                                           // the one of the two
};

// How long an inproc endpoint waits for a peer in its own process before it says that
// inproc cannot reach another process (only a direct caller meets this: README, "inproc
// between processes").
constexpr std::chrono::seconds kInprocPeerGrace{1};

// What a Writer and a Reader have in common: their topic, its endpoint, and (inproc) their
// entry in the process's registry of the topic.
class Endpoint {
 public:
  Endpoint(Context &ctx, const char *topic, bool writer)
      : ctx_(ctx), topic_(topic), endpoint_(endpoint_for(ctx.settings, topic)), writer_(writer) {}
  virtual ~Endpoint() {
    if (inproc_ && writer_) inproc_->writers.fetch_sub(1);
  }

 protected:
  // inproc: enters this endpoint, now set up, in its topic's registry.
  void join_inproc() {
    InprocProcess &p = InprocProcess::get();
    {
      std::lock_guard lock(p.mu);
      inproc_ = &p.topics[topic_];
    }
    (writer_ ? inproc_->ever_written : inproc_->ever_read).store(true);
    if (writer_) inproc_->writers.fetch_add(1);
    inproc_since_ = std::chrono::steady_clock::now();
  }
  // inproc: the grace has passed and no peer (a reader for a writer, a writer for a
  // reader) has ever been in this process.
  bool alone() const {
    const auto &peer_came = writer_ ? inproc_->ever_read : inproc_->ever_written;
    return !peer_came.load(std::memory_order_relaxed) &&
           std::chrono::steady_clock::now() - inproc_since_ > kInprocPeerGrace;
  }
  std::string alone_message() const {
    return "inproc://" + topic_ + " has no " + (writer_ ? "reader" : "writer") +
           " in this process after 1 s: inproc:// only connects sockets of one process, so it "
           "needs --placement intra (both roles in one node); between processes use --transport "
           "tcp or ipc";
  }
  // Where the run cannot be failed (the node gives up at its match timeout; a listener has
  // no caller): says alone_message() on stderr, once per `hinted` flag.
  void hint_if_alone(bool &hinted) const {
    if (hinted || !inproc_ || !alone()) return;
    std::fprintf(stderr, "zeromq: %s\n", alone_message().c_str());
    hinted = true;
  }

  Context &ctx_;
  const std::string topic_, endpoint_;
  const bool writer_;
  InprocProcess::Topic *inproc_ = nullptr;
  std::chrono::steady_clock::time_point inproc_since_;
};

}  // namespace psbzmq
