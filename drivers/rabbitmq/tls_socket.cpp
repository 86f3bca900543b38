#include "tls_socket.h"

#include <amqp_ssl_socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "psbench/sdk.hpp"

namespace psbrabbitmq {

amqp_socket_t *tls_socket(amqp_connection_state_t conn, const Settings &settings) {
  psb::sdk::require_files(settings.tls);
  ERR_clear_error();
  amqp_socket_t *socket = amqp_ssl_socket_new(conn);
  if (socket == nullptr)
    psb::sdk::fail("security=tls: cannot make a TLS socket: %s",
                   tls_failure(AMQP_STATUS_SSL_ERROR).c_str());
  if (amqp_ssl_socket_set_cacert(socket, settings.tls.ca.c_str()) != AMQP_STATUS_OK)
    psb::sdk::fail("security=tls: cannot load the CA certificate %s: %s", settings.tls.ca.c_str(),
                   tls_failure(AMQP_STATUS_SSL_ERROR).c_str());
  if (amqp_ssl_socket_set_key(socket, settings.tls.cert.c_str(), settings.tls.key.c_str()) !=
      AMQP_STATUS_OK)
    psb::sdk::fail("security=tls: cannot load the client certificate %s and key %s: %s",
                   settings.tls.cert.c_str(), settings.tls.key.c_str(),
                   tls_failure(AMQP_STATUS_SSL_ERROR).c_str());
  // rabbitmq-c's own host check reads DNS names and the CN only, never an IP address SAN
  // (the broker's certificate names its address as one): OpenSSL checks the address
  // during the chain's verification instead, which then fails the handshake itself.
  amqp_ssl_socket_set_verify_peer(socket, 1);
  amqp_ssl_socket_set_verify_hostname(socket, 0);
  auto *ctx = static_cast<SSL_CTX *>(amqp_ssl_socket_get_context(socket));
  X509_VERIFY_PARAM *param = ctx ? SSL_CTX_get0_param(ctx) : nullptr;
  const char *host = settings.host.c_str();
  if (param == nullptr || (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1 &&
                           X509_VERIFY_PARAM_set1_host(param, host, 0) != 1))
    psb::sdk::fail("security=tls: cannot make OpenSSL check the broker's name %s", host);
  return socket;
}

bool tls_status(int status) {
  return status <= AMQP_STATUS_SSL_ERROR && status > AMQP_STATUS_SSL_ERROR - 0x100;
}

std::string tls_failure(int status) {
  std::string text = amqp_error_string2(status);
  if (status == AMQP_STATUS_SSL_PEER_VERIFY_FAILED)
    text +=
        " (the broker's certificate does not chain to ca.pem, has expired, or does not "
        "name the broker's address)";
  char reason[256];
  for (unsigned long e = ERR_get_error(); e != 0; e = ERR_get_error()) {
    ERR_error_string_n(e, reason, sizeof reason);
    text += std::string(text.empty() ? "" : "; ") + reason;
  }
  return text;
}

}  // namespace psbrabbitmq
