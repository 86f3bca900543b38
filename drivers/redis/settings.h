// The driver's view of a psb_config: validated once by check() and open(), then kept in
// the context so the timed path never looks at strings.
#ifndef PSBENCH_REDIS_SETTINGS_H
#define PSBENCH_REDIS_SETTINGS_H

#include <cstdint>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbredis {

// Largest message, header included. Redis bulk strings may hold 512 MB; psbench's
// sizes stop at 4 MiB, and the server's pubsub output buffer limit is sized for it.
constexpr uint64_t kMaxPayload = 4194304;

// Bound on every blocking socket operation outside take(): connecting, a command's
// reply, a write the server does not read (SO_SNDTIMEO). A dead or stopped server
// makes the call fail after this long instead of hanging.
constexpr int kIoTimeoutS = 10;

// reliability reliable (writer.h, reader.h: streams): a down server is tried again
// at most this often, and a connect or a reconnect's first command waits at most this long.
constexpr int64_t kRetryNs = 100'000'000;
constexpr int kReconnectTimeoutMs = 1000;

struct Settings : psb::sdk::RunSettings {
  psb::sdk::BrokerAddress broker;  // option broker=HOST:PORT
  // reliability reliable (volatile or persistent): Redis Streams instead of pub/sub.
  bool streams = false;

  // "HOST:PORT" as given, for messages.
  const char *server() const { return broker.text.c_str(); }
  // The pub/sub channel of a topic, and its stream key (reliability reliable):
  // psbench:<run id>:<topic> (keys and pub/sub channels are separate namespaces in Redis).
  std::string channel(const char *topic) const { return "psbench:" + run_id + ":" + topic; }
  // The connection name of a topic's stream readers (CLIENT SETNAME), which the writer
  // counts for matched_readers: psbench-reader:<run id>:<topic>.
  std::string reader_name(const char *topic) const {
    return "psbench-reader:" + run_id + ":" + topic;
  }
  // MAXLEN ~ of the topic streams: about 256 MiB of messages of the run's size, between
  // 64 and 100000 entries (README.md, "Durability persistent: Redis Streams").
  uint64_t stream_bound() const;
};

// A context (one per role) holds only the settings, and no connection: every writer has
// its own publishing connection and every reader its own subscribing one (a connection in
// subscribed mode cannot PUBLISH). The SDK keeps the endpoints and destroys those the
// caller left open before the context.
struct Context {
  Settings settings;
};

// Validates cfg, recording every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

}  // namespace psbredis

#endif
