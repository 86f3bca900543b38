// One TCP connection to redis-server through hiredis, and what every endpoint does with
// it outside the timed path.
#ifndef PSBENCH_REDIS_CONNECTION_H
#define PSBENCH_REDIS_CONNECTION_H

#include <sys/uio.h>

#include <cstdint>
#include <ctime>
#include <string>

#include "hiredis_c.h"
#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbredis {

using psb::sdk::format;
using psb::sdk::now_ns;
using psb::sdk::wait_readable;

// A blocking hiredis context on settings' broker: TCP_NODELAY (hiredis sets it),
// connect, reply and send timeouts of kIoTimeoutS, the reader's buffer never given back
// (maxbuf 0). Throws psb::sdk::Error if the server cannot be reached. `what` names the
// connection in messages ("publisher", "subscriber").
redisContext *connect_server(const Settings &s, const char *what);

// For a reconnection (reliability reliable: Redis Streams): a context whose connect, replies and
// sends are bounded by timeout_ms, maxbuf 0 as above; nullptr when the server cannot be reached
// (why it could not in *why). Never throws for an unreachable server.
redisContext *try_connect(const Settings &s, int timeout_ms, std::string *why);

// Sends a command and returns its reply (an error reply too: the caller looks at it).
// Throws psb::sdk::Error if the connection failed. Sent with MSG_NOSIGNAL, so a closed
// connection is an error and never a SIGPIPE; the reply is read by hiredis.
redisReply *command(redisContext *c, const Settings &s, const char *what, int argc,
                    const char **argv, const size_t *argvlen);

// psb::sdk::send_all within kIoTimeoutS. 0 = sent, otherwise the errno (EAGAIN: timed out).
inline int send_all(int fd, iovec *iov, int iovcnt) {
  return psb::sdk::send_all(fd, iov, iovcnt, now_ns() + int64_t(kIoTimeoutS) * 1'000'000'000);
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

// Sends a command whose last argument is a message: header holds the command up to that
// argument's "$" (prefix_len bytes) with room after it for "<len>\r\n"; the length is
// written there, then header, message and "\r\n" go out in one send_all. Its result.
int send_with_payload(int fd, char *header, size_t prefix_len, const void *data, size_t len);

}  // namespace psbredis

#endif
