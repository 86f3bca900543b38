#include "settings.h"

#include "psbench/sdk.hpp"
#include "psbench/sdk_broker.hpp"
#include "psbench/sdk_security.hpp"

namespace psbredis {

uint64_t Settings::stream_bound() const {
  const uint64_t size = max_payload > 0 ? max_payload : 1;
  const uint64_t n = (uint64_t(256) << 20) / size;
  return n < 64 ? 64 : n > 100000 ? 100000 : n;
}

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "channel names are made from it");
  // reliable: Redis Streams (writer.h, reader.h); best_effort: pub/sub.
  s.streams = cfg.qos.reliability == PSB_RELIABLE;
  if (cfg.qos.durability == PSB_PERSISTENT && cfg.qos.reliability != PSB_RELIABLE)
    refuse.add("reliability",
               "durability persistent needs reliability reliable: it is served by Redis "
               "Streams (XADD, XREAD from the last id read, the server's append-only file), "
               "which keep every message; best_effort is Redis pub/sub, which keeps nothing. "
               "Use --reliability reliable with --durability persistent");
  if (cfg.qos.durability == PSB_TRANSIENT_LOCAL)
    refuse.add("durability",
               "durability 'transient_local' is not supported: Redis pub/sub stores no "
               "message, and a stream reader starts after the last entry there when it joins "
               "(a late joiner gets nothing written before). Use volatile, or persistent "
               "(Redis Streams in the server's append-only file, with reliability reliable)");
  if (cfg.qos.history != 0)
    refuse.add("history",
               "history '%s' is not supported: Redis pub/sub keeps no history; the "
               "server forwards each message once to the subscribers of the moment (its only "
               "queue is the per-client output buffer). Leave --history unset",
               cfg.qos.history == PSB_KEEP_ALL ? "keep_all" : "keep_last");
  if (cfg.max_payload > kMaxPayload)
    refuse.add("size", "size %llu bytes is over this driver's largest message of %llu bytes",
               static_cast<unsigned long long>(cfg.max_payload),
               static_cast<unsigned long long>(kMaxPayload));
  if (cfg.use_loan) refuse.add("loan", "--loan is not supported (no zero-copy write)");
  const psb::sdk::Options options(cfg, refuse);
  psb::sdk::broker_option(options, refuse, 6379, "redis-server", "redis-server", s.broker);
  // hiredis 0.14.1 (Debian 12) has no TLS: no SSL context, no redisInitiateSSL (hiredis_ssl
  // arrived in hiredis 1.0), so a TLS redis-server cannot be reached (README.md, "Security").
  psb::sdk::security_options(options, refuse, {},
                             "hiredis 0.14.1 (Debian 12's libhiredis) has no TLS support (it came "
                             "with hiredis 1.0's hiredis_ssl), so this driver speaks plain TCP "
                             "only; run without --security");
  return s;
}

}  // namespace psbredis
