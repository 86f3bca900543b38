// Options security=tls and security_dir=DIR (docs/security.md): mutual TLS to the broker,
// with DIR/ca.pem to verify it and DIR/cert.pem + DIR/key.pem as the client certificate.
#ifndef PSBENCH_RABBITMQ_SECURITY_H
#define PSBENCH_RABBITMQ_SECURITY_H

#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psbrabbitmq {

struct Tls {
  bool on = false;
  std::string ca, cert, key;  // absolute or as given: DIR/ca.pem, DIR/cert.pem, DIR/key.pem
};

// Refuses a mode other than tls and one option without the other; opens no file (an
// experiment's check passes a folder that does not exist yet).
Tls parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse);

// When connecting: throws psb::sdk::Error naming a file of the three that cannot be read.
void require_files(const Tls &tls);

}  // namespace psbrabbitmq

#endif
