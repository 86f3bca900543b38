// nats: core NATS through cnats (the NATS C client) and a nats-server.
//
// One connection per context; a writer publishes on a subject, a reader subscribes to it
// (a synchronous subscription for wait and poll, an asynchronous one with cnats's own
// delivery thread for listener). Subjects are "psbench.<run id>.<topic>". Best effort
// and volatile only: core NATS delivers at most once to the subscribers connected now.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <nats/nats.h>

#include "psbench/driver.h"
#include "settings.h"

namespace psbnats {
namespace {

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

std::mutex g_lib_mu;
int g_lib_users = 0;

bool library_acquire(psb_error *err) {
  std::lock_guard lock(g_lib_mu);
  if (g_lib_users == 0) {
    natsStatus s = nats_Open(-1);
    if (s != NATS_OK) {
      psb_set_error(err, "nats: cannot initialize the cnats library: %s", natsStatus_GetText(s));
      return false;
    }
  }
  ++g_lib_users;
  return true;
}

// The last context gone: cnats's own threads (timers, async callbacks, garbage
// collector, finished delivery threads) end before this returns.
void library_release() {
  std::lock_guard lock(g_lib_mu);
  if (--g_lib_users == 0) {
    natsStatus s = nats_CloseAndWait(kLibraryCloseTimeoutMs);
    if (s != NATS_OK)
      std::fprintf(stderr, "nats: cnats did not shut down within %lld ms: %s\n",
                   (long long)kLibraryCloseTimeoutMs, natsStatus_GetText(s));
  }
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

struct Context {
  Settings settings;
  std::string run_id;
  uint64_t max_payload = 0;        // the run's largest message
  int64_t server_max_payload = 0;  // the server's max_payload, read at connect
  natsConnection *nc = nullptr;
  std::atomic<bool> closing{false};
  DoneFlag closed;                 // cnats's closed callback has run
  // Unsubscribed, but not destroyed until the connection's reader thread has been
  // joined (see destroy_reader_now).
  std::vector<natsSubscription *> retired;
};

struct Writer {
  Context *ctx;
  std::string subject;
};

struct Reader {
  Context *ctx;
  std::string subject;
  natsSubscription *sub = nullptr;
  natsMsg *held = nullptr;  // the sample take() returned, until release() or the next take()
  psb_on_data on_data = nullptr;
  void *user = nullptr;
  DoneFlag delivery_done;   // listener: cnats's delivery thread has finished
  bool awaits_delivery_done = false;
};

// The calling thread's last cnats error text (cnats keeps it per thread).
const char *last_error_text() {
  const char *text = nats_GetLastError(nullptr);
  return (text && *text) ? text : "no detail";
}

void fill_status_error(psb_error *err, const char *what, const Context *ctx, natsStatus s) {
  if (s == NATS_CONNECTION_CLOSED)
    psb_set_error(err,
              "nats: %s: the connection to nats-server at %s is closed (the server ended or "
              "closed this client; the driver does not reconnect)",
              what, ctx->settings.address.c_str());
  else
    psb_set_error(err, "nats: %s: %s (%s)", what, natsStatus_GetText(s), last_error_text());
}

// ---- cnats callbacks (cnats's threads) -----------------------------------------------

void on_connection_closed(natsConnection *nc, void *closure) {
  auto *ctx = static_cast<Context *>(closure);
  if (!ctx->closing.load()) {
    const char *text = nullptr;
    natsConnection_GetLastError(nc, &text);
    std::fprintf(stderr,
                 "nats: the connection to nats-server at %s closed during the run (cnats: %s); "
                 "writes and takes fail from now on\n",
                 ctx->settings.address.c_str(), (text && *text) ? text : "server gone");
  }
  ctx->closed.set();
}

void on_message(natsConnection *, natsSubscription *, natsMsg *msg, void *closure) {
  auto *r = static_cast<Reader *>(closure);
  r->on_data(r->user, natsMsg_GetData(msg), size_t(natsMsg_GetDataLength(msg)));
  natsMsg_Destroy(msg);
}

void on_subscription_complete(void *closure) { static_cast<Reader *>(closure)->delivery_done.set(); }

// ---- the ABI ---------------------------------------------------------------------------

const char *nats_version() {
  static const std::string text = std::string("cnats ") + nats_GetVersion();
  return text.c_str();
}

int nats_check(const psb_config *cfg, psb_error *err) {
  return parse_settings(cfg, nullptr, err) ? 0 : -1;
}

void free_context(Context *ctx) {
  if (ctx->nc != nullptr) {
    ctx->closing.store(true);
    natsConnection_Close(ctx->nc);  // flushes what is buffered, joins the reader and flusher
    if (!ctx->closed.wait()) {
      // Its callback may still come and read ctx: leave both in place rather than free
      // memory a cnats thread will touch.
      std::fprintf(stderr, "nats: cnats did not report the connection closed; leaving it\n");
      return;
    }
    for (natsSubscription *sub : ctx->retired) natsSubscription_Destroy(sub);
    natsConnection_Destroy(ctx->nc);
  }
  delete ctx;
  library_release();
}

void *nats_open(const psb_config *cfg, psb_error *err) {
  Settings settings;
  if (!parse_settings(cfg, &settings, err)) return nullptr;
  nats_version();  // computed here, never on the timed path
  if (!library_acquire(err)) return nullptr;
  auto *ctx = new (std::nothrow) Context();
  if (ctx == nullptr) {
    psb_set_error(err, "nats: out of memory");
    library_release();
    return nullptr;
  }
  ctx->settings = std::move(settings);
  ctx->run_id = cfg->run_id;
  ctx->max_payload = cfg->max_payload;
  const std::string name = std::string("psbench-") + cfg->run_id;

  natsOptions *opts = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetURL(opts, ctx->settings.url.c_str());
  if (s == NATS_OK) s = natsOptions_SetName(opts, name.c_str());
  // A lost server is an error for the run, not something to ride out.
  if (s == NATS_OK) s = natsOptions_SetAllowReconnect(opts, false);
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, kConnectTimeoutMs);
  if (s == NATS_OK) s = natsOptions_SetWriteDeadline(opts, kWriteDeadlineMs);
  // true: a publish writes to the socket in the calling thread. false: cnats's flusher
  // thread writes, after waiting up to 1 ms for more messages to batch.
  if (s == NATS_OK) s = natsOptions_SetSendAsap(opts, ctx->settings.send_asap);
  if (s == NATS_OK) s = natsOptions_SetClosedCB(opts, on_connection_closed, ctx);
  if (s != NATS_OK) {
    psb_set_error(err, "nats: cannot set connection options: %s (%s)", natsStatus_GetText(s),
              last_error_text());
    natsOptions_Destroy(opts);
    free_context(ctx);
    return nullptr;
  }
  s = natsConnection_Connect(&ctx->nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) {
    psb_set_error(err,
              "nats: cannot connect to nats-server at %s: %s (%s); is it running there? psbench "
              "starts one itself unless you give option broker",
              ctx->settings.address.c_str(), natsStatus_GetText(s), last_error_text());
    ctx->nc = nullptr;
    free_context(ctx);
    return nullptr;
  }
  ctx->server_max_payload = natsConnection_GetMaxPayload(ctx->nc);
  return ctx;
}

void nats_close(void *p) {
  if (p != nullptr) free_context(static_cast<Context *>(p));
}

void *nats_create_writer(void *p, const char *topic, psb_error *err) {
  auto *ctx = static_cast<Context *>(p);
  if (ctx->max_payload > uint64_t(ctx->server_max_payload)) {
    psb_set_error(err,
              "nats: messages of %llu bytes do not fit: nats-server at %s accepts at most %lld "
              "bytes (its max_payload); psbench configures the servers it starts for the run's "
              "size; give your own server max_payload: %llu or more",
              (unsigned long long)ctx->max_payload, ctx->settings.address.c_str(),
              (long long)ctx->server_max_payload, (unsigned long long)ctx->max_payload);
    return nullptr;
  }
  auto *w = new (std::nothrow) Writer{ctx, {}};
  if (w == nullptr) {
    psb_set_error(err, "nats: out of memory");
    return nullptr;
  }
  if (!subject_of(ctx->run_id.c_str(), topic, &w->subject, err)) {
    delete w;
    return nullptr;
  }
  return w;
}

void nats_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

// Timed path: natsConnection_Publish copies the protocol line and the payload into the
// connection's buffer (a payload larger than the buffer's room goes to the socket
// straight from the caller's memory) and, with send_asap, writes it in this thread.
int nats_write(void *p, const void *data, size_t len, psb_error *err) {
  auto *w = static_cast<Writer *>(p);
  natsStatus s = natsConnection_Publish(w->ctx->nc, w->subject.c_str(), data, int(len));
  if (s == NATS_OK) return 0;
  fill_status_error(err, "publish", w->ctx, s);
  return -1;
}

// ABI drain: a PING/PONG round trip (natsConnection_FlushTimeout). cnats writes its
// buffer before the PING, and nats-server answers in order, so the PONG means the server
// has every message published on this connection before (with send_asap=false, also
// what waited in cnats's buffer for the flusher thread). Milliseconds, rounded up.
int nats_drain(void *p, int64_t timeout_ns, psb_error *err) {
  auto *w = static_cast<Writer *>(p);
  const int64_t timeout_ms = timeout_ns <= 0 ? 1 : (timeout_ns + 999'999) / 1'000'000;
  natsStatus s = natsConnection_FlushTimeout(w->ctx->nc, timeout_ms);
  if (s == NATS_OK) return 1;
  if (s == NATS_TIMEOUT) {
    psb_set_error(err, "nats: drain: nats-server at %s did not confirm the messages published to "
                       "%s within %lld ms (no PONG)",
                  w->ctx->settings.address.c_str(), w->subject.c_str(), (long long)timeout_ms);
    return 0;
  }
  fill_status_error(err, "drain", w->ctx, s);
  return -1;
}

// ABI counters: cnats's count of the messages it dropped for this subscription at its
// pending limit (slow consumer). Writers count nothing.
void nats_counters(void *endpoint, int is_reader, psb_put_counter put, void *user) {
  if (!is_reader) return;
  auto *r = static_cast<Reader *>(endpoint);
  int64_t dropped = 0;
  if (r->sub != nullptr && natsSubscription_GetDropped(r->sub, &dropped) == NATS_OK)
    put(user, "dropped", uint64_t(dropped));
}

void destroy_reader_now(Reader *r) {
  if (r->held != nullptr) natsMsg_Destroy(r->held);
  r->held = nullptr;
  if (r->sub != nullptr) {
    int64_t dropped = 0;
    if (natsSubscription_GetDropped(r->sub, &dropped) == NATS_OK && dropped > 0)
      std::fprintf(stderr,
                   "nats: cnats dropped %lld messages of %s: the subscription's pending limit "
                   "(65536 messages, 64 MiB) was full (slow consumer)\n",
                   (long long)dropped, r->subject.c_str());
    // Fails harmlessly when the connection is already closed (the subscription is then
    // closed too, and its delivery thread finishing all the same).
    natsSubscription_Unsubscribe(r->sub);
    if (r->awaits_delivery_done && !r->delivery_done.wait()) {
      // The callback may still run and read r: leave it rather than free it under cnats.
      std::fprintf(stderr, "nats: the delivery thread of %s did not finish; leaving it\n",
                   r->subject.c_str());
      return;
    }
    // cnats 3.4.1's reader thread looks up a message's subscription, lets go of the
    // lock and copies the payload (~1 ms for 4 MiB) before it touches the subscription
    // again, holding no reference to it: a subscription destroyed in between is used
    // after it was freed (a crash; fixed in cnats 3.6.1, "Crash processing inbound
    // message for destroyed subscription"). So the driver keeps its reference until
    // close() has joined that thread.
    try {
      r->ctx->retired.push_back(r->sub);
    } catch (const std::bad_alloc &) {
      // Out of memory: keep the reference for good rather than risk the crash.
    }
  }
  delete r;
}

void *nats_create_reader(void *p, const char *topic, psb_on_data on_data, void *user,
                         psb_error *err) {
  auto *ctx = static_cast<Context *>(p);
  auto *r = new (std::nothrow) Reader();
  if (r == nullptr) {
    psb_set_error(err, "nats: out of memory");
    return nullptr;
  }
  r->ctx = ctx;
  r->on_data = on_data;
  r->user = user;
  if (!subject_of(ctx->run_id.c_str(), topic, &r->subject, err)) {
    delete r;
    return nullptr;
  }
  natsStatus s;
  if (on_data != nullptr) {
    s = natsConnection_Subscribe(&r->sub, ctx->nc, r->subject.c_str(), on_message, r);
    if (s == NATS_OK) s = natsSubscription_SetOnCompleteCB(r->sub, on_subscription_complete, r);
    r->awaits_delivery_done = s == NATS_OK;
  } else {
    s = natsConnection_SubscribeSync(&r->sub, ctx->nc, r->subject.c_str());
  }
  // Core NATS cannot tell who listens (matched counts are -1), so the node cannot wait
  // for a match: the SUB must be in force at the server before the node says it is
  // ready. A PING/PONG round trip after it guarantees the server has processed it.
  if (s == NATS_OK) s = natsConnection_FlushTimeout(ctx->nc, kSubscribeFlushTimeoutMs);
  if (s != NATS_OK) {
    fill_status_error(err, "subscribe", ctx, s);
    destroy_reader_now(r);
    return nullptr;
  }
  return r;
}

void nats_destroy_reader(void *r) { destroy_reader_now(static_cast<Reader *>(r)); }

int nats_matched(void *) { return -1; }  // core NATS does not say who listens

// Timed path. wait: NextMsg blocks on the subscription's condition variable up to the
// timeout (milliseconds, rounded up). poll: NextMsg with 0 returns at once.
int nats_take(void *p, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  auto *r = static_cast<Reader *>(p);
  if (r->held != nullptr) {
    natsMsg_Destroy(r->held);
    r->held = nullptr;
  }
  const int64_t timeout_ms = timeout_ns <= 0 ? 0 : (timeout_ns + 999'999) / 1'000'000;
  if (timeout_ms == 0) {
    // An empty poll through NextMsg(0) costs ~400 ns: cnats records NATS_TIMEOUT as the
    // thread's last error (formatting its text and error stack) on every empty call.
    // The queue's count costs ~15 ns; a closed subscription falls through to NextMsg,
    // which says why.
    int pending = 0;
    if (natsSubscription_GetPending(r->sub, &pending, nullptr) == NATS_OK && pending == 0)
      return 0;
  }
  for (;;) {
    natsMsg *msg = nullptr;
    natsStatus s = natsSubscription_NextMsg(&msg, r->sub, timeout_ms);
    if (s == NATS_OK) {
      r->held = msg;
      *data = natsMsg_GetData(msg);
      *len = size_t(natsMsg_GetDataLength(msg));
      return 1;
    }
    if (s == NATS_TIMEOUT) return 0;
    // Reported once after cnats dropped messages at the pending limit; what was dropped
    // counts as lost, and the queue still holds the messages after the gap.
    if (s == NATS_SLOW_CONSUMER) continue;
    fill_status_error(err, "receive", r->ctx, s);
    return -1;
  }
}

void nats_release(void *p) {
  auto *r = static_cast<Reader *>(p);
  if (r->held != nullptr) {
    natsMsg_Destroy(r->held);
    r->held = nullptr;
  }
}

// C++ exceptions must not cross the C ABI.
template <typename F>
auto guarded(psb_error *err, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception &e) {
    psb_set_error(err, "nats: %s", e.what());
    return {};
  }
}

void *open_guarded(const psb_config *cfg, psb_error *err) {
  return guarded(err, [&]() -> void * { return nats_open(cfg, err); });
}
int check_guarded(const psb_config *cfg, psb_error *err) {
  try {
    return nats_check(cfg, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "nats: %s", e.what());
    return -1;
  }
}
void *create_writer_guarded(void *ctx, const char *topic, psb_error *err) {
  return guarded(err, [&]() -> void * { return nats_create_writer(ctx, topic, err); });
}
void *create_reader_guarded(void *ctx, const char *topic, psb_on_data cb, void *user,
                            psb_error *err) {
  return guarded(err, [&]() -> void * { return nats_create_reader(ctx, topic, cb, user, err); });
}

const char *const kTransports[] = {"tcp", nullptr};
const char *const kServices[] = {"nats-server", nullptr};
const char *const kOptionKeys[] = {"broker", "send_asap", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "nats",
    .description = "core NATS (no JetStream) through cnats and a nats-server over TCP: best "
                   "effort, volatile, subjects psbench.<run>.<topic>",
    .version = nats_version,
    .caps = {.reliability = PSB_BEST_EFFORT,  // reliable would need JetStream
             .durability = PSB_VOLATILE,      // so would transient_local
             .history = 0,                    // no history to ask for (see README)
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr,  // nothing on disk or in /dev/shm
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,  // and at most the server's max_payload
             .loan = 0,
             .readers_per_topic = 0,  // no limit
             .writers_per_topic = 0},  // no limit
    .check = check_guarded,
    .open = open_guarded,
    .close = nats_close,
    .create_writer = create_writer_guarded,
    .destroy_writer = nats_destroy_writer,
    .create_reader = create_reader_guarded,
    .destroy_reader = nats_destroy_reader,
    .matched_readers = nats_matched,
    .matched_writers = nats_matched,
    .write = nats_write,
    .loan = nullptr,
    .write_loan = nullptr,
    .take = nats_take,
    .release = nats_release,
    // send_asap=true: every write goes out at once. send_asap=false holds writes back up
    // to 1 ms for cnats's flusher thread, on purpose (the option shows what that costs),
    // and cnats has no call that only writes its buffer (natsConnection_Flush is a
    // server round trip).
    .flush = nullptr,
    .drain = nats_drain,
    .counters = nats_counters,
};

}  // namespace
}  // namespace psbnats

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) {
  return &psbnats::kDriver;
}
