// Options security=tls and security_dir=DIR (docs/security.md): mutual TLS to the broker,
// with DIR/ca.pem to verify it and DIR/cert.pem + DIR/key.pem as the client certificate.
#ifndef PSBENCH_NATS_SECURITY_H
#define PSBENCH_NATS_SECURITY_H

#include "psbench/sdk_security.hpp"

namespace psbnats {

using Tls = psb::sdk::Security;

// Refuses a mode other than tls and one option without the other; opens no file.
inline Tls parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse) {
  return psb::sdk::security_options(options, refuse, {"tls"},
                                    "the only mode is tls (mutual TLS to the broker)");
}

using psb::sdk::require_files;  // when connecting: names a file that cannot be read

}  // namespace psbnats

#endif
