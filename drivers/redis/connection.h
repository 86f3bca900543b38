// One TCP connection to redis-server through hiredis, and what every endpoint does with
// it outside the timed path.
#ifndef PSBENCH_REDIS_CONNECTION_H
#define PSBENCH_REDIS_CONNECTION_H

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// hiredis 0.14's sds.h declares its functions without extern "C" (hiredis.h includes it
// outside its own extern "C" block): included first here, with C linkage, so that
// sdsMakeRoomFor and friends link. Include this header instead of <hiredis.h>.
extern "C" {
#include <sds.h>
}
#include <hiredis.h>

#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbredis {

using psb::sdk::fail;
using psb::sdk::format;
using psb::sdk::now_ns;
using psb::sdk::wait_readable;

// hiredis's objects, freed when they go out of scope.
struct FreeReply {
  void operator()(redisReply *r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, FreeReply>;
struct FreeContext {
  void operator()(redisContext *c) const { redisFree(c); }
};
using Link = std::unique_ptr<redisContext, FreeContext>;

// A blocking hiredis context on settings' broker: TCP_NODELAY (hiredis sets it),
// connect, reply and send timeouts of kIoTimeoutS, the reader's buffer never given back
// (maxbuf 0). Throws psb::sdk::Error if the server cannot be reached. `what` names the
// connection in messages ("publisher", "subscriber").
Link connect_server(const Settings &s, const char *what);

// For a reconnection (reliability reliable: Redis Streams): a context whose connect, replies and
// sends are bounded by timeout_ms, maxbuf 0 as above; nullptr when the server cannot be reached
// (why it could not in *why). Never throws for an unreachable server. With first_command,
// that command is sent too, and an error reply (e.g. LOADING from a server reading its data)
// fails the connection as well (why: refused_as then the server's text).
Link try_connect(const Settings &s, const char *what, int timeout_ms, std::string *why,
                 std::initializer_list<std::string_view> first_command = {},
                 const char *refused_as = "");

// Sends a command and returns its reply (an error reply too: the caller looks at it).
// Throws psb::sdk::Error if the connection failed. Sent with MSG_NOSIGNAL, so a closed
// connection is an error and never a SIGPIPE; the reply is read by hiredis.
Reply command(redisContext *c, const Settings &s, const char *what,
              std::initializer_list<std::string_view> args);
// The text of an error reply, else `otherwise`.
inline const char *error_or(const redisReply *r, const char *otherwise) {
  return r->type == REDIS_REPLY_ERROR ? r->str : otherwise;
}

// The lines of a server's replies, read byte by byte off the socket: each without its
// "\r\n", NUL-terminated, at most 255 bytes kept (a longer one is cut).
class ReplyLines {
 public:
  // One byte; true when it ended a line, which line() and size() then give.
  bool feed(char c) {
    if (c != '\n') {
      if (filling_ < sizeof line_ - 1) line_[filling_++] = c;
      return false;
    }
    size_ = filling_;
    filling_ = 0;
    if (size_ > 0 && line_[size_ - 1] == '\r') --size_;
    line_[size_] = '\0';
    return true;
  }
  const char *line() const { return line_; }
  size_t size() const { return size_; }
  void clear() { filling_ = size_ = 0; }

 private:
  char line_[256] = {};
  size_t filling_ = 0, size_ = 0;
};

// A command sent without hiredis, as RESP bytes built once: every argument but the last
// fixed (PUBLISH <channel>, XADD <key> MAXLEN ~ <n> * d, XREAD ... STREAMS <key>), the last
// (the message, the last id read) given to send(), which writes its length into the room
// after the fixed part and sends both in one send_all: no allocation on the timed path.
class Command {
 public:
  Command(std::initializer_list<std::string_view> fixed) : Command(fixed.begin(), fixed.size()) {}
  Command(const std::string_view *fixed, size_t n);
  // psb::sdk::send_all's result within kIoTimeoutS: 0 = sent, otherwise the errno (EAGAIN:
  // timed out).
  int send(int fd, const void *last, size_t len);

 private:
  std::vector<char> header_;  // "*<argc>\r\n", the fixed arguments, "$", room for "<len>\r\n"
  size_t prefix_len_ = 0;
};

// What a reader and a writer both hold: the run's settings, the topic's name, their own
// connection and, for streams, what reconnecting to a server that went away takes (one
// attempt at most every kRetryNs: hiredis does not reconnect).
class Endpoint {
 protected:
  Endpoint(const Settings &s, const char *topic, const char *pubsub_role, const char *stream_role)
      : settings_(s),
        streams_(s.streams),
        name_(s.channel(topic)),
        reader_name_(s.reader_name(topic)),
        role_(s.streams ? stream_role : pubsub_role) {}
  // A connection that must be made: throws psb::sdk::Error if the server cannot be reached.
  void connect() {
    c_ = connect_server(settings_, role_);
    fd_ = c_->fd;
  }
  // Streams: one connection attempt if none was made in the last kRetryNs: connect, then
  // first_command (refused by a server that is not ready, e.g. loading its data: the
  // attempt failed). true = connected.
  bool connect_again(std::initializer_list<std::string_view> first_command,
                     const char *refused_as = "");
  // Streams: the connection is gone (why, for messages); the next attempt may follow at once.
  void lose(std::string why);
  // Pub/sub: marks the connection broken with that message and throws it.
  [[noreturn, gnu::cold]] void break_with(std::string message);
  // The bytes that have arrived, without blocking: their count, 0 when none has. A connection
  // that ended or failed: pub/sub's breaks (closed_by: what may have closed it), a stream's is
  // lost (0).
  size_t receive(char *buf, size_t size, const char *closed_by);
  const char *role() const { return role_; }  // names the connection in messages

  const Settings settings_;
  const bool streams_;
  const std::string name_;         // the channel (pub/sub) or the stream's key
  const std::string reader_name_;  // streams: the connection name of the topic's readers
  Link c_;
  int fd_ = -1;
  uint64_t reconnects_ = 0;
  psb::sdk::RetryPacer pacer_{kRetryNs};
  std::string down_why_;        // streams: why the server is unreachable
  std::string broken_message_;  // pub/sub: why the connection broke, without the driver's name

 private:
  const char *role_;
};

}  // namespace psbredis

#endif
