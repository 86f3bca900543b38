// What a run asks of the rabbitmq driver, checked and parsed once (check() and open()).
#ifndef PSBENCH_RABBITMQ_SETTINGS_H
#define PSBENCH_RABBITMQ_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"
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

// Records every refusal: what AMQP through RabbitMQ cannot honour, an option missing or
// malformed (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

// The exchange of a topic: "psbench.<run id>.<topic>". Throws psb::sdk::Error when it is
// longer than an AMQP short string or empty.
std::string exchange_of(const std::string &run_id, const char *topic);

// A durable reader's queue: "psbench.<run id>.<topic>.<16 random hex digits>", the same
// for the reader's whole life (every reconnection) and never another reader's, also in
// other processes and hosts of the run. Throws like exchange_of.
std::string durable_queue_of(const std::string &run_id, const char *topic);

}  // namespace psbrabbitmq

#endif
