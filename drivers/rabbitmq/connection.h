// One AMQP connection with one channel (1), to the broker of option broker: every writer
// and every reader has its own, so that none waits for another's frames and a listener
// thread is the only user of its reader's connection (rabbitmq-c connections are not
// thread-safe).
#ifndef PSBENCH_RABBITMQ_CONNECTION_H
#define PSBENCH_RABBITMQ_CONNECTION_H

#include <amqp.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbrabbitmq {

constexpr amqp_channel_t kChannel = 1;

inline constexpr int kConnectTimeoutS = 5;
// Every RPC (declare, bind, consume, close) and the login handshake: a broker that does
// not answer within this fails the call instead of hanging it.
inline constexpr int kRpcTimeoutS = 10;
// A reconnection (durability persistent): a write waits for it at most about this long.
inline constexpr int kAgainTimeoutS = 1;
inline constexpr int kDefaultFrameMax = 131072;  // AMQP's and RabbitMQ's default
inline constexpr int kFrameOverhead = 8;         // type, channel, size, end octet

// "the broker closed the connection: CODE TEXT" (connection.close, channel.close alike).
template <class Close>
std::string closed_by_broker(const char *what, const amqp_method_t &method) {
  const auto *m = static_cast<const Close *>(method.decoded);
  return std::string("the broker closed the ") + what + ": " + std::to_string(m->reply_code) + " " +
         std::string(static_cast<const char *>(m->reply_text.bytes), m->reply_text.len);
}

inline std::string reply_text(const amqp_method_t &method) {
  if (method.id == AMQP_CONNECTION_CLOSE_METHOD)
    return closed_by_broker<amqp_connection_close_t>("connection", method);
  if (method.id == AMQP_CHANNEL_CLOSE_METHOD)
    return closed_by_broker<amqp_channel_close_t>("channel", method);
  return psb::sdk::format("unexpected AMQP method 0x%08x", unsigned(method.id));
}

// Why opening the TLS socket failed: rabbitmq-c's status and OpenSSL's reasons (its
// error queue on this thread), e.g. "certificate verify failed".
inline std::string tls_failure(int status) {
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

// Whether a status is a TLS one (AMQP_STATUS_SSL_*), not a socket's or the protocol's.
inline bool tls_status(int status) {
  return status <= AMQP_STATUS_SSL_ERROR && status > AMQP_STATUS_SSL_ERROR - 0x100;
}

// The TLS socket of a connection with option security=tls (mutual TLS, README.md): it
// verifies the broker (chain to ca.pem, its address in the certificate's SAN) and presents
// cert.pem + key.pem; throws psb::sdk::Error naming the file it could not load.
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
  const char *host = settings.broker.host.c_str();
  if (param == nullptr || (X509_VERIFY_PARAM_set1_ip_asc(param, host) != 1 &&
                           X509_VERIFY_PARAM_set1_host(param, host, 0) != 1))
    psb::sdk::fail("security=tls: cannot make OpenSSL check the broker's name %s", host);
  return socket;
}

// The broker went away (its socket closed or failed, or it closed the connection as it
// shut down): a durability persistent endpoint reconnects; any other fails.
class BrokerGone : public psb::sdk::Error {
 public:
  using psb::sdk::Error::Error;
};

// How long connecting and each RPC may take: the first connection of an endpoint (a
// broker that is not there fails create_reader/create_writer quickly, one that is slow
// to answer is waited for) or a reconnection (a write waits for it at most about 1 s).
enum class Patience { first, again };

class Connection {
 public:
  // Connects (5 s at most; 1 s again), logs in as guest on vhost "/" with no heartbeats
  // and a frame size that holds the run's largest message (or the broker's largest), and
  // opens the channel. Throws psb::sdk::Error naming the broker and what failed.
  Connection(const Settings &settings, const char *role, Patience patience = Patience::first)
      : settings_(settings), conn_(amqp_new_connection()) {
    if (conn_ == nullptr) psb::sdk::fail("out of memory for a connection");
    // Owned by the connection.
    amqp_socket_t *socket =
        settings.tls.on ? tls_socket(conn_, settings) : amqp_tcp_socket_new(conn_);
    if (socket == nullptr) psb::sdk::fail("out of memory for a socket");
    const bool again = patience == Patience::again;
    const timeval rpc_timeout{again ? kAgainTimeoutS : kRpcTimeoutS, 0};
    amqp_set_rpc_timeout(conn_, &rpc_timeout);
    amqp_set_handshake_timeout(conn_, &rpc_timeout);
    const timeval connect_timeout{again ? kAgainTimeoutS : kConnectTimeoutS, 0};
    const int s = amqp_socket_open_noblock(socket, settings.broker.host.c_str(),
                                           settings.broker.port, &connect_timeout);
    if (s != AMQP_STATUS_OK) {
      const std::string why = settings.tls.on ? tls_failure(s) : amqp_error_string2(s);
      if (tls_status(s))
        psb::sdk::fail("cannot connect the %s to the broker at %s with TLS: %s", role,
                       settings.broker.text.c_str(), why.c_str());
      psb::sdk::fail(
          "cannot connect the %s to the broker at %s%s: %s; is it running there? psbench starts "
          "one itself unless you give option broker",
          role, settings.broker.text.c_str(), settings.tls.on ? " with TLS" : "", why.c_str());
    }
    // One body frame holds the run's largest message when the broker allows it (psbench's
    // brokers do: broker_launch.py); otherwise the broker's frame_max is used.
    const uint64_t wanted =
        std::max<uint64_t>(kDefaultFrameMax, settings.max_payload + kFrameOverhead + 4096);
    const amqp_rpc_reply_t r =
        amqp_login(conn_, "/", 0, int(std::min<uint64_t>(wanted, INT32_MAX)), 0 /* no heartbeats */,
                   AMQP_SASL_METHOD_PLAIN, "guest", "guest");
    if (r.reply_type != AMQP_RESPONSE_NORMAL) {
      lost_ = true;
      try {
        check_rpc("log in");
      } catch (const psb::sdk::Error &e) {
        if (!settings.tls.on) throw;
        // TLS 1.3: the broker checks the client's certificate after the client's side of
        // the handshake is done, and refuses it by closing the connection; rabbitmq-c then
        // sees the login go unanswered, without the TLS alert's reason.
        psb::sdk::fail(
            "%s, right after the TLS handshake: the broker ends the connection so when it "
            "refuses this client's certificate (expired, or from another CA; its log says "
            "which: rabbitmq-c does not pass on the TLS alert)",
            e.what());
      }
    }
    amqp_channel_open(conn_, kChannel);
    check_rpc("open a channel");
    channel_open_ = true;
  }
  // Closes the channel and the connection (bounded).
  ~Connection() {
    if (!lost_) {
      // Each waits for the broker's close-ok, kRpcTimeoutS at most.
      if (channel_open_) amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
      amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    }
  }
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;

  amqp_connection_state_t state() const { return conn_; }
  bool lost() const { return lost_; }  // a call failed: the connection is of no more use

  // The reply of the RPC just made (amqp_exchange_declare() etc.): throws its error.
  void check_rpc(const char *what) {
    const amqp_rpc_reply_t r = amqp_get_rpc_reply(conn_);
    switch (r.reply_type) {
      case AMQP_RESPONSE_NORMAL:
        return;
      case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        fail_status(what, r.library_error);
      case AMQP_RESPONSE_SERVER_EXCEPTION:
        lost_ = true;  // the broker closed the channel or the connection: nothing to close
        psb::sdk::fail("%s at the broker %s: %s", what, settings_.broker.text.c_str(),
                       reply_text(r.reply).c_str());
      default:
        lost_ = true;
        psb::sdk::fail("%s at the broker %s: no reply", what, settings_.broker.text.c_str());
    }
  }
  // A failed rabbitmq-c call (its status): the connection counts as lost; throws
  // BrokerGone when the socket is gone, psb::sdk::Error otherwise.
  [[noreturn, gnu::cold, gnu::noinline]] void fail_status(const char *what, int status) {
    lost_ = true;
    if (status == AMQP_STATUS_CONNECTION_CLOSED || status == AMQP_STATUS_SOCKET_ERROR ||
        status == AMQP_STATUS_SOCKET_CLOSED) {
      throw BrokerGone(psb::sdk::format(
          "%s: the connection to the broker at %s is gone (%s: the broker ended or closed it; %s)",
          what, settings_.broker.text.c_str(), amqp_error_string2(status),
          settings_.persistent ? "reconnecting (durability persistent)"
                               : "the driver reconnects with durability persistent only"));
    }
    psb::sdk::fail("%s: %s (broker %s)", what, amqp_error_string2(status),
                   settings_.broker.text.c_str());
  }
  // The broker closed the channel or the connection (frame's method): throws its reason
  // (BrokerGone for connection.close 320, the broker shutting down).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_closed(const amqp_frame_t &frame) {
    lost_ = true;
    const amqp_method_t &m = frame.payload.method;
    if (m.id == AMQP_CONNECTION_CLOSE_METHOD &&
        static_cast<const amqp_connection_close_t *>(m.decoded)->reply_code ==
            AMQP_CONNECTION_FORCED)
      throw BrokerGone(reply_text(m) + " (broker " + settings_.broker.text + ")");
    psb::sdk::fail("%s (broker %s)", reply_text(frame.payload.method).c_str(),
                   settings_.broker.text.c_str());
  }

  // The next frame: 1 = one, 0 = none within tv (NULL: wait for one), else throws.
  // Timed path: rabbitmq-c decodes into the channel's pool (reused after release()).
  int read_frame(amqp_frame_t &frame, const struct timeval *tv) {
    const int s = amqp_simple_wait_frame_noblock(conn_, &frame, tv);
    if (s == AMQP_STATUS_OK) return 1;
    if (s == AMQP_STATUS_TIMEOUT) return 0;
    fail_status("receive", s);
  }
  // Whether a frame can be read without waiting for the socket.
  bool buffered() const { return amqp_frames_enqueued(conn_) || amqp_data_in_buffer(conn_); }
  int fd() const { return amqp_get_sockfd(conn_); }
  // Gives rabbitmq-c's decoding pool back for reuse (the frames read so far lose their bytes).
  void release() { amqp_maybe_release_buffers(conn_); }

 private:
  const Settings &settings_;
  // Destroyed last (closing the socket), also when the constructor throws.
  psb::sdk::Owned<amqp_connection_state_t, amqp_destroy_connection> conn_;
  bool channel_open_ = false;
  bool lost_ = false;
};

}  // namespace psbrabbitmq

#endif
