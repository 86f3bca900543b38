// The TLS socket of a connection with option security=tls (mutual TLS, README.md).
#ifndef PSBENCH_RABBITMQ_TLS_SOCKET_H
#define PSBENCH_RABBITMQ_TLS_SOCKET_H

#include <amqp.h>

#include <string>

#include "settings.h"

namespace psbrabbitmq {

// A rabbitmq-c TLS socket of conn that verifies the broker (chain to ca.pem, its address in
// the certificate's SAN) and presents cert.pem + key.pem; throws psb::sdk::Error naming
// the file it could not load.
amqp_socket_t *tls_socket(amqp_connection_state_t conn, const Settings &settings);

// Why opening the TLS socket failed: rabbitmq-c's status and OpenSSL's reasons (its
// error queue on this thread), e.g. "certificate verify failed".
std::string tls_failure(int status);

// Whether a status is a TLS one (AMQP_STATUS_SSL_*), not a socket's or the protocol's.
bool tls_status(int status);

}  // namespace psbrabbitmq

#endif
