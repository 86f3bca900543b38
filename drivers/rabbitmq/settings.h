// What a run asks of the rabbitmq driver, checked and parsed once (check() and open()).
#ifndef PSBENCH_RABBITMQ_SETTINGS_H
#define PSBENCH_RABBITMQ_SETTINGS_H

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

#include "psbench/sdk.hpp"
#include "psbench/sdk_broker.hpp"
#include "psbench/sdk_connection.hpp"
#include "psbench/sdk_security.hpp"

namespace psbrabbitmq {

constexpr uint64_t kMaxPayload = 4u << 20;  // the node's own largest --size
constexpr int kDefaultPrefetch = 256;       // RabbitMQ's advice: 100 to 300

struct Settings {
  psb::sdk::BrokerAddress broker;  // option broker: text as given, host, port
  std::string run_id;
  bool reliable = false;
  // durability persistent: durable exchanges and queues, persistent messages, and
  // endpoints that reconnect when the broker goes away (README.md, "Durability persistent")
  bool persistent = false;
  uint64_t max_payload = 0;         // the run's largest message
  int prefetch = kDefaultPrefetch;  // reliable: unacknowledged deliveries per reader
  psb::sdk::Security tls;           // options security=tls, security_dir: mutual TLS
};

// What RabbitMQ cannot honour, with the reason. The node refuses the QoS outside the
// capability sets itself; these say why, also to a caller that goes straight to the ABI.
inline void check_qos(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  if (cfg.qos.durability == PSB_TRANSIENT_LOCAL)
    refuse.add("durability",
               "durability transient_local is not supported: an AMQP queue exists only "
               "from its reader's creation on, and nothing keeps a topic's last messages "
               "for a reader that joins later; use volatile or persistent");
  else if (cfg.qos.durability == PSB_PERSISTENT && cfg.qos.reliability != PSB_RELIABLE)
    refuse.add("durability",
               "durability persistent needs reliability reliable: only publisher confirms "
               "say which messages the broker has written to disk, and only acknowledging "
               "consumers get again what they had not acknowledged when the broker went "
               "away");
  else if (cfg.qos.durability != PSB_VOLATILE && cfg.qos.durability != PSB_PERSISTENT)
    refuse.add("durability", "durability must be volatile or persistent");
  if (cfg.qos.history == PSB_KEEP_LAST)
    refuse.add("history",
               "history keep_last is not supported: a queue's x-max-length with "
               "x-overflow=drop-head bounds only the messages still waiting in the queue, "
               "not those the broker has already pushed towards the reader (up to the "
               "prefetch count, and without limit for best effort's no-ack consumers), so a "
               "reader that falls behind would get more than the newest N; use keep_all "
               "(the default: the queue keeps every message until its reader takes it)");
}

// Records every refusal: what AMQP through RabbitMQ cannot honour, an option missing or
// malformed (check() and open(), which throws them).
inline Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  Settings s;
  s.run_id = psb::sdk::run_id(cfg, refuse, "it names the exchanges");
  s.reliable = cfg.qos.reliability == PSB_RELIABLE;
  s.persistent = cfg.qos.durability == PSB_PERSISTENT;
  s.max_payload = cfg.max_payload;
  psb::sdk::payload_in_range(cfg, refuse, 0, kMaxPayload);
  if (cfg.transport != nullptr && std::strcmp(cfg.transport, "default") != 0 &&
      std::strcmp(cfg.transport, "tcp") != 0)
    refuse.add("transport",
               "transport '%s' is not supported; this driver supports tcp (AMQP 0-9-1)",
               cfg.transport);
  check_qos(cfg, refuse);
  const psb::sdk::Options options(cfg, refuse);
  psb::sdk::broker_option(options, refuse, 5672, "rabbitmq-server", "broker", s.broker);
  if (!options.given_but("prefetch", !s.reliable,
                         "applies to reliability reliable only (best effort's consumers do not "
                         "acknowledge, so no prefetch count limits them)"))
    s.prefetch = int(options.number("prefetch", kDefaultPrefetch, 1, 65535));
  s.tls = psb::sdk::tls_options(options, refuse);
  return s;
}

// The exchange of a topic: "psbench.<run id>.<topic>". Throws psb::sdk::Error when it is
// longer than an AMQP short string or empty.
inline std::string exchange_of(const std::string &run_id, const char *topic) {
  if (*topic == '\0') psb::sdk::fail("empty topic name");
  std::string name = "psbench." + run_id + "." + topic;
  if (name.size() > 255)
    psb::sdk::fail("exchange name '%s' is longer than AMQP's 255 bytes; use a shorter topic",
                   name.c_str());
  return name;
}

// A durable reader's queue: "psbench.<run id>.<topic>.<16 random hex digits>", the same
// for the reader's whole life (every reconnection) and never another reader's, also in
// other processes and hosts of the run. Throws like exchange_of.
inline std::string durable_queue_of(const std::string &run_id, const char *topic) {
  std::random_device random;  // the kernel's: two processes never start alike
  const uint64_t tag = (uint64_t(random()) << 32) | random();
  std::string name =
      exchange_of(run_id, topic) + psb::sdk::format(".%016llx", (unsigned long long)tag);
  if (name.size() > 255)
    psb::sdk::fail("queue name '%s' is longer than AMQP's 255 bytes; use a shorter topic",
                   name.c_str());
  return name;
}

}  // namespace psbrabbitmq

#endif
