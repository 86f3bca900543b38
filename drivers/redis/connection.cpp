#include "connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "psbench/sdk.hpp"

namespace psbredis {

using psb::sdk::fail;

std::string format(const char *fmt, ...) {
  char text[sizeof(psb_error::message)];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  return text;
}

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

int send_all(int fd, struct iovec *iov, int iovcnt) {
  // SO_SNDTIMEO bounds one sendmsg(); a server that takes a little now and then must
  // not stretch the whole write past the same bound.
  const int64_t give_up = now_ns() + int64_t(kIoTimeoutS) * 1000000000;
  while (iovcnt > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EWOULDBLOCK ? EAGAIN : errno;
    }
    auto left = static_cast<size_t>(n);
    while (iovcnt > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --iovcnt;
    }
    if (iovcnt > 0) {
      iov->iov_base = static_cast<char *>(iov->iov_base) + left;
      iov->iov_len -= left;
      if (now_ns() >= give_up) return EAGAIN;
    }
  }
  return 0;
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

int wait_readable(int fd, int stop_fd, int64_t timeout_ns) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
  timespec ts{}, *tsp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    tsp = &ts;
  }
  const int n = ppoll(fds, stop_fd >= 0 ? 2 : 1, tsp, nullptr);
  if (n < 0) return errno == EINTR ? 0 : -1;
  if (n == 0) return 0;
  if (stop_fd >= 0 && fds[1].revents != 0) return 2;
  return 1;  // POLLIN, or POLLHUP/POLLERR: the read that follows says which
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace psbredis
