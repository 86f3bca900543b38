#include "writer.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbredis {

Writer::Writer(Context &ctx, const char *topic)
    : settings_(ctx.settings),
      c_(connect_server(settings_, "publisher")),
      fd_(c_->fd),
      channel_(settings_.channel(topic)),
      publish_{"PUBLISH", channel_} {}

Writer::~Writer() {
  // Every PUBLISH answered means the server has taken every message from this
  // socket; closing with unread replies would send a reset instead of a FIN.
  if (!broken_) {
    try {
      await_replies(2'000'000'000);
    } catch (const std::exception &) {
    }
  }
}

void Writer::fail_broken() const { throw psb::sdk::Error(broken_message_); }

void Writer::break_with(std::string message) {
  broken_ = true;
  broken_message_ = std::move(message);
  fail_broken();
}

void Writer::consume(const char *p, size_t n, std::string &refusal) {
  bool refused = false;
  for (size_t i = 0; i < n; ++i) {
    if (!lines_.feed(p[i])) continue;
    const char *line = lines_.line();
    const size_t len = lines_.size();
    if (pending_ == 0 || len < 2 || (line[0] != ':' && line[0] != '-'))
      break_with(
          format("unexpected reply on the publisher connection of %s: '%s' (%llu "
                 "PUBLISH replies awaited)",
                 channel_.c_str(), line, static_cast<unsigned long long>(pending_)));
    --pending_;
    if (line[0] == '-' && !refused) {
      refused = true;
      refusal = format("redis-server refused a PUBLISH to %s: %s", channel_.c_str(), line + 1);
    }
  }
}

void Writer::read_replies() {
  std::string refusal;
  for (;;) {
    const ssize_t n = recv(fd_, rbuf_, sizeof rbuf_, MSG_DONTWAIT);
    if (n > 0) {
      // A refused PUBLISH: keep reading what else arrived, then say so.
      consume(rbuf_, static_cast<size_t>(n), refusal);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!refusal.empty()) throw psb::sdk::Error(refusal);
      return;
    }
    if (n == 0)
      break_with(
          format("redis-server at %s closed the publisher connection of %s (stopped or "
                 "killed?)",
                 settings_.address().c_str(), channel_.c_str()));
    break_with(format("publisher connection of %s to %s: %s", channel_.c_str(),
                      settings_.address().c_str(), std::strerror(errno)));
  }
}

void Writer::await_replies(int64_t timeout_ns) {
  const int64_t end = now_ns() + timeout_ns;
  for (;;) {
    read_replies();
    if (pending_ == 0) return;
    const int64_t left = end - now_ns();
    if (left <= 0 || wait_readable(fd_, -1, left) < 0)
      throw psb::sdk::Timeout(
          format("redis-server at %s did not answer %llu PUBLISH to %s within %lld ms",
                 settings_.address().c_str(), static_cast<unsigned long long>(pending_),
                 channel_.c_str(), static_cast<long long>(timeout_ns / 1000000)));
  }
}

bool Writer::drain(int64_t timeout_ns) {
  if (broken_) fail_broken();
  await_replies(timeout_ns);
  return true;
}

void Writer::write(const void *data, size_t len) {
  if (broken_) fail_broken();
  if (len > kMaxPayload)
    psb::sdk::fail("a %zu-byte message is over the driver's largest of %llu bytes", len,
                   static_cast<unsigned long long>(kMaxPayload));
  // The replies of earlier PUBLISH: a closed connection or a refusal shows here.
  read_replies();
  const int e = publish_.send(fd_, data, len);
  if (e != 0) {
    // Part of the command may be out: the stream cannot be resumed.
    if (e == EAGAIN)
      break_with(
          format("PUBLISH to %s: redis-server at %s did not take the message within %d "
                 "s (stopped?); the publisher connection is given up",
                 channel_.c_str(), settings_.address().c_str(), kIoTimeoutS));
    break_with(format("PUBLISH to %s: the connection to redis-server at %s broke: %s",
                      channel_.c_str(), settings_.address().c_str(), std::strerror(e)));
  }
  ++pending_;
}

int Writer::matched() {
  if (broken_) return -1;
  try {
    // Replies come in order: the PUBLISH ones first, then this command's.
    await_replies(int64_t(kIoTimeoutS) * 1000000000);
  } catch (const std::exception &e) {
    if (!broken_) {
      broken_ = true;
      broken_message_ = e.what();
    }
    return -1;
  }
  Reply r;
  try {
    r = command(c_.get(), settings_, "publisher", {"PUBSUB", "NUMSUB", channel_});
  } catch (const std::exception &e) {
    broken_ = true;
    broken_message_ = e.what();
    return -1;
  }
  int count = -1;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[1]->type == REDIS_REPLY_INTEGER)
    count = static_cast<int>(r->element[1]->integer);
  else if (r->type == REDIS_REPLY_ERROR) {
    broken_ = true;
    broken_message_ = format("PUBSUB NUMSUB %s: %s", channel_.c_str(), r->str);
  }
  return count;
}

}  // namespace psbredis
