// What one run asks of the kafka driver, parsed once from psb_config (check() and open()
// share it): the broker, the producer profile and what the QoS maps to.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"
#include "psbench/sdk_security.hpp"

namespace psbkafka {

constexpr uint64_t kMaxPayload = 4u << 20;  // the node's own largest --size
// Room for a record batch's header and one record's framing beside the payload.
constexpr uint64_t kBatchOverhead = 512;
// Kafka's own default message.max.bytes: no topic limit below it, so that batches of
// small messages (profile=throughput) still fit.
constexpr uint64_t kDefaultMessageMax = 1048588;

enum class Profile { latency, throughput };

struct Settings : psb::sdk::RunSettings {
  std::string broker;  // option broker: HOST:PORT (bootstrap.servers)
  Profile profile = Profile::latency;
  bool acks_all = false;     // reliable: acks=all with the idempotent producer
  bool persistent = false;   // durability persistent: ride out a restart of the broker
  uint64_t max_message = 0;  // the topics' max.message.bytes and the clients' limits
  psb::sdk::Security tls;    // options security=tls, security_dir: mutual TLS
};

inline void parse_qos(const psb_qos &q, psb::sdk::Refusals &refuse, Settings &s) {
  s.acks_all = q.reliability == PSB_RELIABLE;
  s.persistent = q.durability == PSB_PERSISTENT;
  if (s.persistent && !s.acks_all)
    refuse.add("durability",
               "durability persistent needs reliability reliable: with best_effort (acks=0) "
               "the producer does not wait for the broker, so nothing says a message was in "
               "its log when the broker went away, and nothing is sent again; use "
               "--reliability reliable (acks=all, idempotent)");
  if (q.durability == PSB_TRANSIENT_LOCAL)
    refuse.add("durability",
               "durability transient_local is not offered: the broker's log keeps what was "
               "written, but a reader here starts at the log's end when it is created (what "
               "was written before is not replayed), so late joiners get nothing; use volatile (or "
               "persistent)");
  if (q.history != 0) {
    const std::string asked =
        q.history == PSB_KEEP_ALL ? "keep_all" : "keep_last:" + std::to_string(q.history_depth);
    refuse.add("history",
               "history %s cannot be honoured: the broker keeps every message in its log and a "
               "reader reads them all in order, however far behind (nothing is dropped for a "
               "depth); leave history unset",
               asked.c_str());
  }
}

inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.keep(cfg, refuse, "it names the topics");
  const psb::sdk::Options options(cfg, refuse);
  if (const char *broker = options.required("broker", "HOST:PORT",
                                            "psbench sets it when it starts the Kafka broker, "
                                            "or give the address of your own broker")) {
    // librdkafka takes it as it is (bootstrap.servers), where a comma would start another.
    psb::sdk::BrokerAddress b;
    if (psb::sdk::broker_address(broker, 9092, refuse, b) && b.host.find(',') == std::string::npos)
      s.broker = b.text;
    else if (!refuse.has("option:broker"))
      refuse.add("option:broker",
                 "option broker='%s' is not HOST:PORT: one broker, no comma (e.g. 127.0.0.1:9092)",
                 broker);
  }
  s.profile = options.choice("profile", {"latency", "throughput"}, 0) == 1 ? Profile::throughput
                                                                           : Profile::latency;
  if (cfg.use_loan) refuse.add("loan", "loans are not offered (librdkafka copies every payload)");
  psb::sdk::payload_in_range(cfg, refuse, 0, kMaxPayload);
  s.max_message = std::max(kDefaultMessageMax, cfg.max_payload + kBatchOverhead);
  parse_qos(cfg.qos, refuse, s);
  s.tls = psb::sdk::tls_options(options, refuse);
  return s;
}

}  // namespace psbkafka
