// What a run asks of the nats driver, checked and parsed once (check() and open()).
#ifndef PSBENCH_NATS_SETTINGS_H
#define PSBENCH_NATS_SETTINGS_H

#include <string>

#include "psbench/sdk_refusals.hpp"
#include "psbench/sdk_security.hpp"

namespace psbnats {

struct Settings {
  std::string host;  // as given in broker=HOST:PORT ([v6] brackets removed)
  int port = 0;
  std::string address;     // HOST:PORT as given, for messages
  std::string url;         // nats://HOST:PORT
  bool send_asap = true;   // option send_asap (default true)
  psb::sdk::Security tls;  // options security=tls, security_dir: mutual TLS
};

// Records every refusal: what core NATS cannot honour, an option missing or malformed
// (check() and open(), which throws them).
Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse);

// The subject of a topic: "psbench.<run id>.<topic>". Throws psb::sdk::Error when the
// topic holds a character that means something in a NATS subject.
std::string subject_of(const std::string &run_id, const char *topic);

}  // namespace psbnats

#endif
