// What one run asks of the kafka driver, parsed once from psb_config (check() and open()
// share it): the broker, the producer profile and what the QoS maps to.
#ifndef PSBENCH_KAFKA_SETTINGS_H
#define PSBENCH_KAFKA_SETTINGS_H

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

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

// The Kafka topic of a psbench topic (psb_<run>_<suffix> is already a valid Kafka name:
// letters, digits, '_').
std::string kafka_topic(const char *topic);

}  // namespace psbkafka

#endif
