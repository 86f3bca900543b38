#include "connection.h"

#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <span>

#include "psbench/sdk.hpp"

namespace psbredis {

Link try_connect(const Settings &s, const char *what, int timeout_ms, std::string *why,
                 std::initializer_list<std::string_view> first_command, const char *refused_as) {
  const timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  Link c(redisConnectWithTimeout(s.broker.host.c_str(), s.broker.port, tv));
  if (c == nullptr) {
    *why = "out of memory for a hiredis context";
    return nullptr;
  }
  // hiredis bounds connect() only; replies and sends get the same bound here.
  if (c->err != 0 || redisSetTimeout(c.get(), tv) != REDIS_OK) {
    *why = c->errstr;
    return nullptr;
  }
  c->reader->maxbuf = 0;  // keep the read buffer: no free + malloc between messages
  if (first_command.size() == 0) return c;
  try {
    const Reply r = command(c.get(), s, what, first_command);
    if (r->type != REDIS_REPLY_ERROR) return c;
    *why = std::string(refused_as) + r->str;
  } catch (const std::exception &e) {
    *why = e.what();
  }
  return nullptr;
}

Link connect_server(const Settings &s, const char *what) {
  std::string why;
  Link c = try_connect(s, what, kIoTimeoutS * 1000, &why);
  if (c == nullptr)
    fail(
        "cannot connect the %s to redis-server at %s: %s (psbench starts "
        "redis-server and sets option broker; with your own server, is it running there?)",
        what, s.server(), why.c_str());
  return c;
}

Command::Command(const std::string_view *fixed, size_t n) {
  std::string prefix = "*" + std::to_string(n + 1) + "\r\n";
  for (const std::string_view a : std::span(fixed, n))
    prefix += "$" + std::to_string(a.size()) + "\r\n" + std::string(a) + "\r\n";
  prefix += "$";
  prefix_len_ = prefix.size();
  header_.assign(prefix.size() + 24, '\0');  // + up to 20 digits and CRLF
  std::memcpy(header_.data(), prefix.data(), prefix.size());
}

int Command::send(int fd, const void *last, size_t len) {
  char *h = header_.data() + prefix_len_;
  char *end = std::to_chars(h, h + 20, len).ptr;  // a size_t has at most 20 digits
  *end++ = '\r';
  *end++ = '\n';
  static const char crlf[2] = {'\r', '\n'};
  iovec iov[3] = {{header_.data(), static_cast<size_t>(end - header_.data())},
                  {const_cast<void *>(last), len},
                  {const_cast<char *>(crlf), 2}};
  return psb::sdk::send_all(fd, iov, 3, now_ns() + int64_t(kIoTimeoutS) * 1'000'000'000);
}

Reply command(redisContext *c, const Settings &s, const char *what,
              std::initializer_list<std::string_view> args) {
  const std::string name(args.begin()[0]), last(args.end()[-1]);
  const int e = Command(args.begin(), args.size() - 1).send(c->fd, last.data(), last.size());
  if (e != 0)
    fail("sending %s on the %s connection to %s: %s", name.c_str(), what, s.server(),
         e == EAGAIN ? "the server reads nothing (timed out)" : std::strerror(e));
  void *reply = nullptr;
  if (redisGetReply(c, &reply) != REDIS_OK || reply == nullptr) {
    const bool timed_out = c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (timed_out)
      fail("no reply to %s on the %s connection to %s within %d s", name.c_str(), what, s.server(),
           kIoTimeoutS);
    fail("reading the reply to %s on the %s connection to %s: %s", name.c_str(), what, s.server(),
         c->err == REDIS_ERR_EOF ? "the server closed the connection" : c->errstr);
  }
  return Reply(static_cast<redisReply *>(reply));
}

bool Endpoint::connect_again(std::initializer_list<std::string_view> first_command,
                             const char *refused_as) {
  if (!pacer_.due()) return false;
  pacer_.attempted();
  Link c =
      try_connect(settings_, role_, kReconnectTimeoutMs, &down_why_, first_command, refused_as);
  if (c == nullptr) return false;
  c_ = std::move(c);
  fd_ = c_->fd;
  ++reconnects_;
  return true;
}

void Endpoint::lose(std::string why) {
  c_.reset();
  fd_ = -1;
  down_why_ = std::move(why);
  pacer_.lost();  // the first attempt may follow at once
}

void Endpoint::break_with(std::string message) {
  broken_message_ = std::move(message);
  throw psb::sdk::Error(broken_message_);
}

size_t Endpoint::receive(char *buf, size_t size, const char *closed_by) {
  ssize_t n;
  while ((n = recv(fd_, buf, size, MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  if (n > 0) return static_cast<size_t>(n);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  if (!streams_ && n == 0)
    break_with(format("redis-server at %s closed the %s connection of %s (%s)", settings_.server(),
                      role_, name_.c_str(), closed_by));
  if (!streams_)
    break_with(format("%s connection of %s to %s: %s", role_, name_.c_str(), settings_.server(),
                      std::strerror(errno)));
  lose(n == 0 ? "it closed the connection (stopped or killed?)" : std::strerror(errno));
  return 0;
}

}  // namespace psbredis
