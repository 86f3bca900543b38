// redis: Redis pub/sub (best_effort) or Redis Streams (reliable) through hiredis. This
// file names the driver and its capabilities and reaches the server once per context;
// Writer and Reader, each for pub/sub or streams, do the work. The C ABI
// table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <atomic>
#include <cstring>
#include <mutex>

#include "connection.h"
#include "psbench/sdk.hpp"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbredis {
namespace {

// hiredis 0.14 has no call that reports its version: this is the headers' version. Once a
// context in this process has reached the server: the client's version and the server's
// (INFO server -> redis_version), e.g. for the node's summary. --describe connects nowhere
// and gets the client's alone.
const std::string kClientVersion = std::to_string(HIREDIS_MAJOR) + "." +
                                   std::to_string(HIREDIS_MINOR) + "." +
                                   std::to_string(HIREDIS_PATCH) + " (hiredis header)";
std::atomic<const char *> g_version{kClientVersion.c_str()};

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
const Settings &probe_server(const Settings &s) {
  const Link c = connect_server(s, "probe");
  if (const Reply r = command(c.get(), s, "probe", {"PING"}); r->type == REDIS_REPLY_ERROR)
    psb::sdk::fail("redis-server at %s refuses commands: %s", s.server(), r->str);
  if (g_version.load(std::memory_order_acquire) == kClientVersion.c_str()) {
    Reply i;
    try {
      i = command(c.get(), s, "probe", {"INFO", "server"});
    } catch (const std::exception &) {
    }
    static std::once_flag once;  // the first server's version; the text is never freed
    if (const std::string v = server_version(i.get()); !v.empty())
      std::call_once(once, [&v] {
        static const std::string text = kClientVersion + "; server redis " + v;
        g_version.store(text.c_str(), std::memory_order_release);
      });
  }
  return s;
}

struct Redis {
  static constexpr const char *name = "redis";
  static constexpr const char *description =
      "Redis through hiredis via redis-server over TCP: best_effort is PUBLISH/SUBSCRIBE "
      "(fire-and-forget, volatile, no history); reliable is Redis Streams (XADD, XREAD "
      "from the last id read, reconnecting), durability persistent in the server's "
      "append-only file";
  static const char *version() { return g_version.load(std::memory_order_acquire); }
  static constexpr const char *transports[] = {"tcp", nullptr};
  static constexpr const char *option_keys[] = {"broker", "security", "security_dir", nullptr};
  // best_effort: pub/sub, no acknowledgement, no retransmission, volatile only;
  // reliable: streams, the server keeps the entries (persistent: in its append-only file).
  // check() refuses best_effort with persistent.
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
      .durability = PSB_VOLATILE | PSB_PERSISTENT,
      .history = 0,  // no history to ask for
      .transports = transports,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .crosses_hosts = 1};  // to option broker, wherever it is
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  // Holds no connection: every writer and every reader has its own (settings.h).
  struct Context : psbredis::Context {
    explicit Context(const psb_config &cfg)
        : psbredis::Context{probe_server(psb::sdk::parse_or_throw(cfg, parse_settings))} {}
  };
  // write() does not wait for PUBLISH's (XADD's) reply: drain waits until every one came.
  using Writer = psbredis::Writer;
  using Reader = psbredis::Reader;
};

}  // namespace
}  // namespace psbredis

PSB_SDK_DRIVER(psbredis::Redis)
