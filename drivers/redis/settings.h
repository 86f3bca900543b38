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

struct Settings : psb::sdk::RunSettings {
  std::string host;  // from option broker=HOST:PORT
  int port = 0;

  // "HOST:PORT" as given, for messages.
  std::string address() const;
  // The pub/sub channel of a topic: psbench:<run id>:<topic>.
  std::string channel(const char *topic) const;
};

// Validates cfg, recording every refusal (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

}  // namespace psbredis

#endif
