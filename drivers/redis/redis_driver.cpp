// The psbench driver table for Redis pub/sub through hiredis. This file only adapts
// the C ABI to Context, Writer and Reader.
#include "hiredis_c.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>

#include "psbench/driver.h"

#include "connection.h"
#include "context.h"
#include "psbench/driver_support.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbredis {
namespace {

#define PSB_STR2(x) #x
#define PSB_STR(x) PSB_STR2(x)
// hiredis 0.14 has no call that reports its version: this is the headers' version.
#define CLIENT_VERSION \
  PSB_STR(HIREDIS_MAJOR) "." PSB_STR(HIREDIS_MINOR) "." PSB_STR(HIREDIS_PATCH) " (hiredis header)"

// Once a context in this process has reached the server: the client's version and the
// server's (INFO server -> redis_version), e.g. for the node's summary. --describe
// connects nowhere and gets the client's alone.
std::atomic<bool> g_server_known{false};
char g_with_server[160];
std::mutex g_server_mu;

const char *redis_version() {
  return g_server_known.load(std::memory_order_acquire) ? g_with_server : CLIENT_VERSION;
}

// "redis_version:7.0.15\r\n" inside INFO server's text; empty if not there.
std::string server_version(const redisReply *info) {
  if (info == nullptr || info->type != REDIS_REPLY_STRING) return "";
  const char *key = "redis_version:";
  const char *p = std::strstr(info->str, key);
  if (p == nullptr) return "";
  p += std::strlen(key);
  size_t n = std::strcspn(p, "\r\n");
  return n > 0 && n < 32 ? std::string(p, n) : "";
}

// Reaches the server once per context: a clear error at open() if it is not there,
// and its version, recorded without ever failing a run for it.
bool probe_server(const Settings &s, psb_error *err) {
  redisContext *c = connect_server(s, "probe", err);
  if (c == nullptr) return false;
  const char *ping[1] = {"PING"};
  const size_t ping_len[1] = {4};
  redisReply *r = command(c, s, "probe", 1, ping, ping_len, err);
  bool ok = r != nullptr;
  if (ok && r->type == REDIS_REPLY_ERROR) {
    psb_set_error(err, "redis: redis-server at %s refuses commands: %s", s.address().c_str(), r->str);
    ok = false;
  }
  if (r != nullptr) freeReplyObject(r);
  if (ok && !g_server_known.load(std::memory_order_acquire)) {
    const char *info[2] = {"INFO", "server"};
    const size_t info_len[2] = {4, 6};
    psb_error ignored{};
    redisReply *i = command(c, s, "probe", 2, info, info_len, &ignored);
    const std::string v = server_version(i);
    if (i != nullptr) freeReplyObject(i);
    std::lock_guard lock(g_server_mu);
    if (!v.empty() && !g_server_known.load(std::memory_order_relaxed)) {
      std::snprintf(g_with_server, sizeof g_with_server, "%s; server redis %s", CLIENT_VERSION,
                    v.c_str());
      g_server_known.store(true, std::memory_order_release);
    }
  }
  redisFree(c);
  return ok;
}

int redis_check(const psb_config *cfg, psb_error *err) {
  return parse_settings(cfg, nullptr, err) ? 0 : -1;
}

void *redis_open(const psb_config *cfg, psb_error *err) {
  try {
    Settings s;
    if (!parse_settings(cfg, &s, err) || !probe_server(s, err)) return nullptr;
    auto *ctx = new Context();
    ctx->settings = std::move(s);
    return ctx;
  } catch (const std::exception &e) {
    psb_set_error(err, "redis: open failed: %s", e.what());
    return nullptr;
  }
}

void redis_close(void *ctx) { delete static_cast<Context *>(ctx); }

void *redis_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Context *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "redis: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void redis_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *redis_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user,
                          psb_error *err) {
  try {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "redis: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void redis_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int redis_matched_readers(void *w) { return static_cast<Writer *>(w)->matched_readers(); }

int redis_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

int redis_drain(void *w, int64_t timeout_ns, psb_error *err) {
  return static_cast<Writer *>(w)->drain(timeout_ns, err);
}

int redis_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

void redis_release(void *r) { static_cast<Reader *>(r)->release(); }

const char *const kTransports[] = {"tcp", nullptr};
const char *const kServices[] = {"redis-server", nullptr};
const char *const kOptionKeys[] = {"broker", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "redis",
    .description = "Redis pub/sub through hiredis: PUBLISH/SUBSCRIBE via redis-server over TCP; "
                   "fire-and-forget (best effort, volatile, no history)",
    .version = redis_version,
    .caps = {.reliability = PSB_BEST_EFFORT,  // no acknowledgement, no retransmission
             .durability = PSB_VOLATILE,      // the server stores no message
             .history = 0,                    // no history to ask for
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr,  // nothing outside the server; psbench stops it
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 0,
             .readers_per_topic = 0,  // no limit
             .writers_per_topic = 0},  // no limit
    .check = redis_check,
    .open = redis_open,
    .close = redis_close,
    .create_writer = redis_create_writer,
    .destroy_writer = redis_destroy_writer,
    .create_reader = redis_create_reader,
    .destroy_reader = redis_destroy_reader,
    .matched_readers = redis_matched_readers,
    .matched_writers = nullptr,  // Redis cannot tell who publishes on a channel: -1
    .write = redis_write,
    .loan = nullptr,
    .write_loan = nullptr,
    .take = redis_take,
    .release = redis_release,
    .flush = nullptr,  // every write is on the socket when write() returns
    // write() does not wait for PUBLISH's reply: drain waits until every one came.
    .drain = redis_drain,
    .counters = nullptr,
};

}  // namespace
}  // namespace psbredis

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) {
  return &psbredis::kDriver;
}
