// One AMQP connection with one channel (1), to the broker of option broker: every writer
// and every reader has its own, so that none waits for another's frames and a listener
// thread is the only user of its reader's connection (rabbitmq-c connections are not
// thread-safe).
#ifndef PSBENCH_RABBITMQ_CONNECTION_H
#define PSBENCH_RABBITMQ_CONNECTION_H

#include <amqp.h>

#include <cstdint>
#include <string>

#include "psbench/sdk.hpp"
#include "settings.h"

namespace psbrabbitmq {

constexpr amqp_channel_t kChannel = 1;

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
  Connection(const Settings &settings, const char *role, Patience patience = Patience::first);
  ~Connection();  // closes the channel and the connection (bounded)
  Connection(const Connection &) = delete;
  Connection &operator=(const Connection &) = delete;

  amqp_connection_state_t state() const { return conn_; }
  bool lost() const { return lost_; }  // a call failed: the connection is of no more use

  // The reply of the RPC just made (amqp_exchange_declare() etc.): throws its error.
  void check_rpc(const char *what);
  // A failed rabbitmq-c call (its status): the connection counts as lost; throws
  // BrokerGone when the socket is gone, psb::sdk::Error otherwise.
  [[noreturn, gnu::cold, gnu::noinline]] void fail_status(const char *what, int status);
  // The broker closed the channel or the connection (frame's method): throws its reason
  // (BrokerGone for connection.close 320, the broker shutting down).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_closed(const amqp_frame_t &frame);

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
