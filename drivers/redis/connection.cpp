#include "connection.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "psbench/sdk.hpp"

namespace psbredis {

using psb::sdk::fail;

redisContext *connect_server(const Settings &s, const char *what) {
  const timeval tv{kIoTimeoutS, 0};
  redisContext *c = redisConnectWithTimeout(s.host.c_str(), s.port, tv);
  if (c == nullptr) fail("out of memory for a hiredis context");
  if (c->err != 0) {
    const std::string m = format(
        "cannot connect the %s to redis-server at %s: %s (psbench starts "
        "redis-server and sets option broker; with your own server, is it running there?)",
        what, s.address().c_str(), c->errstr);
    redisFree(c);
    throw psb::sdk::Error(m);
  }
  // hiredis bounds connect() only; replies and sends get the same bound here.
  if (redisSetTimeout(c, tv) != REDIS_OK) {
    const std::string m = format("%s socket timeouts: %s", what, c->errstr);
    redisFree(c);
    throw psb::sdk::Error(m);
  }
  c->reader->maxbuf = 0;  // keep the read buffer: no free + malloc between messages
  return c;
}

redisContext *try_connect(const Settings &s, int timeout_ms, std::string *why) {
  const timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  redisContext *c = redisConnectWithTimeout(s.host.c_str(), s.port, tv);
  if (c == nullptr) {
    *why = "out of memory for a hiredis context";
    return nullptr;
  }
  if (c->err != 0 || redisSetTimeout(c, tv) != REDIS_OK) {
    *why = c->errstr;
    redisFree(c);
    return nullptr;
  }
  c->reader->maxbuf = 0;
  return c;
}

int send_with_payload(int fd, char *header, size_t prefix_len, const void *data, size_t len) {
  char digits[24];
  size_t nd = 0;
  size_t v = len;
  do {
    digits[nd++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char *h = header + prefix_len;
  for (size_t i = 0; i < nd; ++i) h[i] = digits[nd - 1 - i];
  h[nd] = '\r';
  h[nd + 1] = '\n';
  static const char crlf[2] = {'\r', '\n'};
  iovec iov[3] = {{header, prefix_len + nd + 2},
                  {const_cast<void *>(data), len},
                  {const_cast<char *>(crlf), 2}};
  return send_all(fd, iov, 3);
}

redisReply *command(redisContext *c, const Settings &s, const char *what, int argc,
                    const char **argv, const size_t *argvlen) {
  char *cmd = nullptr;
  const int len = redisFormatCommandArgv(&cmd, argc, argv, argvlen);
  if (len < 0) fail("out of memory formatting %s", argv[0]);
  iovec iov{cmd, static_cast<size_t>(len)};
  const int e = send_all(c->fd, &iov, 1);
  redisFreeCommand(cmd);
  if (e != 0)
    fail("sending %s on the %s connection to %s: %s", argv[0], what, s.address().c_str(),
         e == EAGAIN ? "the server reads nothing (timed out)" : std::strerror(e));
  void *reply = nullptr;
  if (redisGetReply(c, &reply) != REDIS_OK || reply == nullptr) {
    const bool timed_out = c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (timed_out)
      fail("no reply to %s on the %s connection to %s within %d s", argv[0], what,
           s.address().c_str(), kIoTimeoutS);
    fail("reading the reply to %s on the %s connection to %s: %s", argv[0], what,
         s.address().c_str(),
         c->err == REDIS_ERR_EOF ? "the server closed the connection" : c->errstr);
  }
  return static_cast<redisReply *>(reply);
}

}  // namespace psbredis
