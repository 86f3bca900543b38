// nats: core NATS through cnats (the NATS C client) and a nats-server.
//
// One connection per context; a writer publishes on a subject, a reader subscribes to it
// (a synchronous subscription for wait and poll, an asynchronous one with cnats's own
// delivery thread for listener). Subjects are "psbench.<run id>.<topic>". Best effort
// and volatile only: core NATS delivers at most once to the subscribers connected now.
// The C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbnats {
namespace {

using psb::sdk::fail;

constexpr int64_t kConnectTimeoutMs = 5000;
// A publish that cannot hand its bytes to the kernel within this time fails (and
// closes the connection) instead of blocking on a server that stopped reading.
constexpr int64_t kWriteDeadlineMs = 10000;
// SUB confirmed by a PING/PONG round trip before create_reader returns.
constexpr int64_t kSubscribeFlushTimeoutMs = 5000;
// How long close()/destroy_reader() wait for cnats to confirm a callback thread is done.
constexpr auto kCallbackDrainTimeout = std::chrono::seconds(10);
constexpr int64_t kLibraryCloseTimeoutMs = 5000;
constexpr uint64_t kMaxPayload = 4u << 20;  // the node's own largest --size

// ---- the cnats library: opened by the first context, closed by the last --------------

// When the last context goes, cnats's own threads (timers, async callbacks, garbage
// collector, finished delivery threads) end before its destructor returns.
struct Library {
  Library() {
    natsStatus s = nats_Open(-1);
    if (s != NATS_OK) fail("cannot initialize the cnats library: %s", natsStatus_GetText(s));
  }
  ~Library() {
    natsStatus s = nats_CloseAndWait(kLibraryCloseTimeoutMs);
    if (s != NATS_OK)
      std::fprintf(stderr, "nats: cnats did not shut down within %lld ms: %s\n",
                   (long long)kLibraryCloseTimeoutMs, natsStatus_GetText(s));
  }
};

// One context's use of the library.
psb::sdk::PerProcess<int, Library>::Lease use_library() {
  static auto &library = *new psb::sdk::PerProcess<int, Library>;  // outlives every Lease
  return library.acquire(0, [] { return std::make_unique<Library>(); });
}

// ---- objects ---------------------------------------------------------------------------

// Set once by a cnats thread, awaited (with a bound) by the thread tearing down.
class DoneFlag {
 public:
  void set() {
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kCallbackDrainTimeout, [&] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// What cnats's closed callback reads, apart from the Context so that it can be left in
// place when cnats does not confirm the connection closed.
struct Link {
  std::string address;
  std::atomic<bool> closing{false};
  DoneFlag closed;  // cnats's closed callback has run
};

// What cnats's delivery thread reads (listener), apart from the Reader for the same reason.
struct Delivery {
  psb::sdk::Listener listener;
  DoneFlag done;  // cnats's delivery thread has finished
};

// The calling thread's last cnats error text (cnats keeps it per thread).
const char *last_error_text() {
  const char *text = nats_GetLastError(nullptr);
  return (text && *text) ? text : "no detail";
}

// The message for a failed cnats call (without the driver's name).
std::string status_message(const char *what, const std::string &address, natsStatus s) {
  if (s == NATS_CONNECTION_CLOSED)
    return psb::sdk::format(
        "%s: the connection to nats-server at %s is closed (the server ended or closed this "
        "client; the driver does not reconnect)",
        what, address.c_str());
  return psb::sdk::format("%s: %s (%s)", what, natsStatus_GetText(s), last_error_text());
}

[[noreturn, gnu::cold, gnu::noinline]] void fail_status(const char *what,
                                                        const std::string &address, natsStatus s) {
  throw psb::sdk::Error(status_message(what, address, s));
}

// ---- cnats callbacks (cnats's threads) -----------------------------------------------

void on_connection_closed(natsConnection *nc, void *closure) {
  auto *link = static_cast<Link *>(closure);
  if (!link->closing.load()) {
    const char *text = nullptr;
    natsConnection_GetLastError(nc, &text);
    std::fprintf(stderr,
                 "nats: the connection to nats-server at %s closed during the run (cnats: %s); "
                 "writes and takes fail from now on\n",
                 link->address.c_str(), (text && *text) ? text : "server gone");
  }
  link->closed.set();
}

void on_message(natsConnection *, natsSubscription *, natsMsg *msg, void *closure) {
  static_cast<Delivery *>(closure)->listener(natsMsg_GetData(msg),
                                             size_t(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
}

// Mutual TLS (option security=tls): the server's certificate must chain to ca.pem and
// carry the broker's host (an IP address SAN here) as cnats's expected hostname; ours is
// cert.pem + key.pem. tls:// makes cnats refuse a server that does not offer TLS.
natsStatus set_up_tls(natsOptions *opts, const Settings &settings) {
  psb::sdk::require_files(settings.tls);
  natsStatus s = natsOptions_SetSecure(opts, true);
  if (s == NATS_OK) s = natsOptions_LoadCATrustedCertificates(opts, settings.tls.ca.c_str());
  if (s == NATS_OK)
    s = natsOptions_LoadCertificatesChain(opts, settings.tls.cert.c_str(),
                                          settings.tls.key.c_str());
  if (s == NATS_OK) s = natsOptions_SetExpectedHostname(opts, settings.host.c_str());
  return s;
}

// A failed connect. Under TLS 1.3 the server checks the client's certificate after the
// client's handshake is done: a refusal (expired, unknown CA) then reaches cnats as the
// connection closing before the server's PONG, without the TLS alert's reason.
[[noreturn, gnu::cold]] void fail_connect(const Settings &settings, natsStatus s) {
  const char *address = settings.address.c_str();
  if (settings.tls.on && s == NATS_SSL_ERROR)
    fail("cannot connect to nats-server at %s with TLS: %s (%s)", address, natsStatus_GetText(s),
         last_error_text());
  if (settings.tls.on && (s == NATS_PROTOCOL_ERROR || s == NATS_CONNECTION_CLOSED))
    fail(
        "cannot connect to nats-server at %s with TLS: %s (%s): the server ended the "
        "connection right after the TLS handshake, which is how it refuses a client "
        "certificate it does not accept (expired, or from another CA; its log says which: "
        "cnats does not pass on the TLS alert)",
        address, natsStatus_GetText(s), last_error_text());
  fail(
      "cannot connect to nats-server at %s%s: %s (%s); is it running there? psbench "
      "starts one itself unless you give option broker",
      address, settings.tls.on ? " with TLS" : "", natsStatus_GetText(s), last_error_text());
}

void on_subscription_complete(void *closure) { static_cast<Delivery *>(closure)->done.set(); }

// ---- the driver ------------------------------------------------------------------------

struct Nats {
  static constexpr const char *name = "nats";
  static constexpr const char *description =
      "core NATS (no JetStream) through cnats and a nats-server over TCP: best effort, "
      "volatile, subjects psbench.<run>.<topic>";
  static std::string version() { return std::string("cnats ") + nats_GetVersion(); }
  static psb::sdk::Capabilities capabilities();
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  class Context;
  class Writer;
  class Reader;
};

psb::sdk::Capabilities Nats::capabilities() {
  static const char *const transports[] = {"tcp", nullptr};
  static const char *const option_keys[] = {"broker", "send_asap", "security", "security_dir",
                                            nullptr};
  return {.reliability = PSB_BEST_EFFORT,  // reliable would need JetStream
          .durability = PSB_VOLATILE,      // so would transient_local
          .history = 0,                    // no history to ask for (see README)
          .transports = transports,
          .option_keys = option_keys,
          .max_payload = kMaxPayload,  // and at most the server's max_payload
          .crosses_hosts = 1};         // to option broker, wherever it is
}

// One connection. No flush(): send_asap=true sends every write at once; send_asap=false
// holds writes back up to 1 ms for cnats's flusher thread, on purpose (the option shows
// what that costs), and cnats has no call that only writes its buffer
// (natsConnection_Flush is a server round trip).
class Nats::Context {
 public:
  explicit Context(const psb_config &cfg)
      : settings(psb::sdk::parse_or_throw(cfg, parse_settings)),
        run_id(cfg.run_id),
        max_payload(cfg.max_payload),
        link_(new Link{settings.address, {}, {}}) {
    Nats::version();  // computed here, never on the timed path
    const std::string name = "psbench-" + run_id;
    natsOptions *opts = nullptr;
    natsStatus s = natsOptions_Create(&opts);
    const std::unique_ptr<natsOptions, void (*)(natsOptions *)> opts_owner(opts,
                                                                           natsOptions_Destroy);
    if (s == NATS_OK) s = natsOptions_SetURL(opts, settings.url.c_str());
    if (s == NATS_OK) s = natsOptions_SetName(opts, name.c_str());
    // A lost server is an error for the run, not something to ride out.
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, kConnectTimeoutMs);
    if (s == NATS_OK) s = natsOptions_SetWriteDeadline(opts, kWriteDeadlineMs);
    // true: a publish writes to the socket in the calling thread. false: cnats's flusher
    // thread writes, after waiting up to 1 ms for more messages to batch.
    if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, settings.send_asap);
    if (s == NATS_OK) s = natsOptions_SetClosedCB(opts, on_connection_closed, link_.get());
    if (s == NATS_OK && settings.tls.on) s = set_up_tls(opts, settings);
    if (s != NATS_OK)
      fail("cannot set connection options: %s (%s)", natsStatus_GetText(s), last_error_text());
    s = natsConnection_Connect(&nc, opts);
    if (s != NATS_OK) {
      nc = nullptr;
      fail_connect(settings, s);
    }
    server_max_payload = natsConnection_GetMaxPayload(nc);
  }

  ~Context() {
    link_->closing.store(true);
    natsConnection_Close(nc);  // flushes what is buffered, joins the reader and flusher
    if (!link_->closed.wait()) {
      // Its callback may still come and read the link: leave it, the connection and the
      // library in place rather than free memory a cnats thread will touch.
      std::fprintf(stderr, "nats: cnats did not report the connection closed; leaving it\n");
      (void)link_.release();
      (void)new decltype(library_)(std::move(library_));  // the library stays open for good
      return;
    }
    for (natsSubscription *sub : retired) natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
  }

  const Settings settings;
  const std::string run_id;
  const uint64_t max_payload;      // the run's largest message
  int64_t server_max_payload = 0;  // the server's max_payload, read at connect
  natsConnection *nc = nullptr;
  // Unsubscribed, but not destroyed until the connection's reader thread has been
  // joined (see Reader::tear_down).
  std::vector<natsSubscription *> retired;

 private:
  // Before link_ and the connection, after them when leaving.
  psb::sdk::PerProcess<int, Library>::Lease library_ = use_library();
  std::unique_ptr<Link> link_;
};

class Nats::Writer {
 public:
  Writer(Context &ctx, const char *topic) : ctx_(ctx) {
    if (ctx.max_payload > uint64_t(ctx.server_max_payload))
      fail(
          "messages of %llu bytes do not fit: nats-server at %s accepts at most %lld "
          "bytes (its max_payload); psbench configures the servers it starts for the run's "
          "size; give your own server max_payload: %llu or more",
          (unsigned long long)ctx.max_payload, ctx.settings.address.c_str(),
          (long long)ctx.server_max_payload, (unsigned long long)ctx.max_payload);
    subject_ = subject_of(ctx.run_id, topic);
  }

  // Timed path: natsConnection_Publish copies the protocol line and the payload into the
  // connection's buffer (a payload larger than the buffer's room goes to the socket
  // straight from the caller's memory) and, with send_asap, writes it in this thread.
  void write(const void *data, size_t len) {
    natsStatus s = natsConnection_Publish(ctx_.nc, subject_.c_str(), data, int(len));
    if (s != NATS_OK) fail_status("publish", ctx_.settings.address, s);
  }

  // A PING/PONG round trip (natsConnection_FlushTimeout). cnats writes its buffer before
  // the PING, and nats-server answers in order, so the PONG means the server has every
  // message published on this connection before (with send_asap=false, also what waited
  // in cnats's buffer for the flusher thread). Milliseconds, rounded up.
  bool drain(int64_t timeout_ns) {
    const int64_t timeout_ms = timeout_ns <= 0 ? 1 : psb::sdk::ms_rounded_up(timeout_ns);
    natsStatus s = natsConnection_FlushTimeout(ctx_.nc, timeout_ms);
    if (s == NATS_OK) return true;
    if (s == NATS_TIMEOUT)
      throw psb::sdk::Timeout(psb::sdk::format(
          "drain: nats-server at %s did not confirm the messages published to %s within %lld ms "
          "(no PONG)",
          ctx_.settings.address.c_str(), subject_.c_str(), (long long)timeout_ms));
    fail_status("drain", ctx_.settings.address, s);
  }

  int matched() const { return -1; }  // core NATS does not say who listens

 private:
  Context &ctx_;
  std::string subject_;
};

class Nats::Reader {
 public:
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
      : ctx_(ctx), subject_(subject_of(ctx.run_id, topic)) {
    natsStatus s;
    if (listener) {
      delivery_.reset(new Delivery{listener, {}});
      s = natsConnection_Subscribe(&sub_, ctx.nc, subject_.c_str(), on_message, delivery_.get());
      if (s == NATS_OK)
        s = natsSubscription_SetOnCompleteCB(sub_, on_subscription_complete, delivery_.get());
      awaits_delivery_done_ = s == NATS_OK;
    } else {
      s = natsConnection_SubscribeSync(&sub_, ctx.nc, subject_.c_str());
    }
    // Core NATS cannot tell who listens (matched counts are -1), so the node cannot wait
    // for a match: the SUB must be in force at the server before the node says it is
    // ready. A PING/PONG round trip after it guarantees the server has processed it.
    if (s == NATS_OK) s = natsConnection_FlushTimeout(ctx.nc, kSubscribeFlushTimeoutMs);
    if (s != NATS_OK) {
      std::string message = status_message("subscribe", ctx.settings.address, s);
      tear_down();
      throw psb::sdk::Error(message);
    }
  }
  ~Reader() { tear_down(); }

  // Timed path. wait: NextMsg blocks on the subscription's condition variable up to the
  // timeout (milliseconds, rounded up). poll: NextMsg with 0 returns at once.
  bool take(int64_t timeout_ns, const void *&data, size_t &len) {
    release();
    const int64_t timeout_ms = psb::sdk::ms_rounded_up(timeout_ns);  // 0 for 0 and less
    if (timeout_ms == 0) {
      // An empty poll through NextMsg(0) costs ~400 ns: cnats records NATS_TIMEOUT as the
      // thread's last error (formatting its text and error stack) on every empty call.
      // The queue's count costs ~15 ns; a closed subscription falls through to NextMsg,
      // which says why.
      int pending = 0;
      if (natsSubscription_GetPending(sub_, &pending, nullptr) == NATS_OK && pending == 0)
        return false;
    }
    for (;;) {
      natsMsg *msg = nullptr;
      natsStatus s = natsSubscription_NextMsg(&msg, sub_, timeout_ms);
      if (s == NATS_OK) {
        held_ = msg;
        data = natsMsg_GetData(msg);
        len = size_t(natsMsg_GetDataLength(msg));
        return true;
      }
      if (s == NATS_TIMEOUT) return false;
      // Reported once after cnats dropped messages at the pending limit; what was dropped
      // counts as lost, and the queue still holds the messages after the gap.
      if (s == NATS_SLOW_CONSUMER) continue;
      fail_status("receive", ctx_.settings.address, s);
    }
  }

  // The sample take() returned, given back early.
  void release() {
    if (held_ != nullptr) {
      natsMsg_Destroy(held_);
      held_ = nullptr;
    }
  }

  int matched() const { return -1; }  // core NATS does not say who listens

  // cnats's count of the messages it dropped for this subscription at its pending limit
  // (slow consumer).
  void counters(psb::sdk::CounterSink put) {
    int64_t dropped = 0;
    if (sub_ != nullptr && natsSubscription_GetDropped(sub_, &dropped) == NATS_OK)
      put("dropped", uint64_t(dropped));
  }

 private:
  void tear_down() {
    release();
    if (sub_ == nullptr) return;
    int64_t dropped = 0;
    if (natsSubscription_GetDropped(sub_, &dropped) == NATS_OK && dropped > 0)
      std::fprintf(stderr,
                   "nats: cnats dropped %lld messages of %s: the subscription's pending limit "
                   "(65536 messages, 64 MiB) was full (slow consumer)\n",
                   (long long)dropped, subject_.c_str());
    // Fails harmlessly when the connection is already closed (the subscription is then
    // closed too, and its delivery thread finishing all the same).
    natsSubscription_Unsubscribe(sub_);
    if (awaits_delivery_done_ && !delivery_->done.wait()) {
      // The callback may still run and read the delivery: leave it rather than free it
      // under cnats (and the subscription with it).
      std::fprintf(stderr, "nats: the delivery thread of %s did not finish; leaving it\n",
                   subject_.c_str());
      (void)delivery_.release();
      return;
    }
    // cnats 3.4.1's reader thread looks up a message's subscription, lets go of the
    // lock and copies the payload (~1 ms for 4 MiB) before it touches the subscription
    // again, holding no reference to it: a subscription destroyed in between is used
    // after it was freed (a crash; fixed in cnats 3.6.1, "Crash processing inbound
    // message for destroyed subscription"). So the driver keeps its reference until
    // the context has closed the connection, which joins that thread.
    try {
      ctx_.retired.push_back(sub_);
    } catch (const std::bad_alloc &) {
      // Out of memory: keep the reference for good rather than risk the crash.
    }
  }

  Context &ctx_;
  const std::string subject_;
  natsSubscription *sub_ = nullptr;
  natsMsg *held_ = nullptr;  // the sample take() returned, until release() or the next take()
  std::unique_ptr<Delivery> delivery_;  // listener only
  bool awaits_delivery_done_ = false;
};

}  // namespace
}  // namespace psbnats

PSB_SDK_DRIVER(psbnats::Nats)
