#include "writer.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "connection.h"
#include "psbench/driver_support.h"

namespace psbredis {

Writer *Writer::create(Context *ctx, const char *topic, psb_error *err) {
  std::unique_ptr<Writer> w(new Writer());
  w->settings_ = ctx->settings;
  w->channel_ = ctx->settings.channel(topic);
  w->c_ = connect_server(w->settings_, "publisher", err);
  if (w->c_ == nullptr) return nullptr;
  w->fd_ = w->c_->fd;
  const std::string prefix = "*3\r\n$7\r\nPUBLISH\r\n$" + std::to_string(w->channel_.size()) +
                             "\r\n" + w->channel_ + "\r\n$";
  w->prefix_len_ = prefix.size();
  w->header_.assign(prefix.size() + 24, '\0');  // + up to 20 digits and CRLF
  std::memcpy(w->header_.data(), prefix.data(), prefix.size());
  ctx->link(w.get());
  return w.release();
}

Writer::~Writer() {
  if (ctx != nullptr) ctx->unlink(this);
  if (c_ != nullptr) {
    // Every PUBLISH answered means the server has taken every message from this
    // socket; closing with unread replies would send a reset instead of a FIN.
    if (!broken_) {
      psb_error ignored;
      await_replies(2'000'000'000, &ignored);
    }
    redisFree(c_);
  }
}

int Writer::fail(psb_error *err) {
  if (err != nullptr) *err = broken_err_;
  return -1;
}

bool Writer::consume(const char *p, size_t n, psb_error *err) {
  bool refused = false;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != '\n') {
      if (line_len_ < sizeof line_ - 1) line_[line_len_++] = p[i];
      continue;
    }
    size_t len = line_len_;
    line_len_ = 0;
    if (len > 0 && line_[len - 1] == '\r') --len;
    line_[len] = '\0';
    if (pending_ == 0 || len < 2 || (line_[0] != ':' && line_[0] != '-')) {
      broken_ = true;
      psb_set_error(&broken_err_,
                "redis: unexpected reply on the publisher connection of %s: '%s' (%llu PUBLISH "
                "replies awaited)",
                channel_.c_str(), line_, static_cast<unsigned long long>(pending_));
      *err = broken_err_;
      return false;
    }
    --pending_;
    if (line_[0] == ':') {
      last_receivers_ = std::strtoll(line_ + 1, nullptr, 10);
    } else if (!refused) {
      refused = true;
      psb_set_error(err, "redis: redis-server refused a PUBLISH to %s: %s", channel_.c_str(),
                line_ + 1);
    }
  }
  return !refused;
}

bool Writer::read_replies(psb_error *err) {
  bool ok = true;
  for (;;) {
    const ssize_t n = recv(fd_, rbuf_, sizeof rbuf_, MSG_DONTWAIT);
    if (n > 0) {
      if (!consume(rbuf_, static_cast<size_t>(n), err)) {
        if (broken_) return false;
        ok = false;  // a refused PUBLISH: keep reading what else arrived
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return ok;
    broken_ = true;
    if (n == 0)
      psb_set_error(&broken_err_,
                "redis: redis-server at %s closed the publisher connection of %s (stopped or "
                "killed?)",
                settings_.address().c_str(), channel_.c_str());
    else
      psb_set_error(&broken_err_, "redis: publisher connection of %s to %s: %s", channel_.c_str(),
                settings_.address().c_str(), std::strerror(errno));
    *err = broken_err_;
    return false;
  }
}

int Writer::await_replies(int64_t timeout_ns, psb_error *err) {
  const int64_t end = now_ns() + timeout_ns;
  for (;;) {
    if (!read_replies(err)) return -1;
    if (pending_ == 0) return 1;
    const int64_t left = end - now_ns();
    if (left <= 0 || wait_readable(fd_, -1, left) < 0) {
      psb_set_error(err,
                "redis: redis-server at %s did not answer %llu PUBLISH to %s within %lld ms",
                settings_.address().c_str(), static_cast<unsigned long long>(pending_),
                channel_.c_str(), static_cast<long long>(timeout_ns / 1000000));
      return 0;
    }
  }
}

int Writer::drain(int64_t timeout_ns, psb_error *err) {
  if (broken_) return fail(err);
  return await_replies(timeout_ns, err);
}

int Writer::write(const void *data, size_t len, psb_error *err) {
  if (broken_) return fail(err);
  if (len > kMaxPayload) {
    psb_set_error(err, "redis: a %zu-byte message is over the driver's largest of %llu bytes", len,
              static_cast<unsigned long long>(kMaxPayload));
    return -1;
  }
  // The replies of earlier PUBLISH: a closed connection or a refusal shows here.
  if (!read_replies(err)) return -1;
  // "<len>\r\n" after the prefix.
  char digits[24];
  size_t nd = 0;
  size_t v = len;
  do {
    digits[nd++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char *h = header_.data() + prefix_len_;
  for (size_t i = 0; i < nd; ++i) h[i] = digits[nd - 1 - i];
  h[nd] = '\r';
  h[nd + 1] = '\n';
  static const char crlf[2] = {'\r', '\n'};
  iovec iov[3] = {{header_.data(), prefix_len_ + nd + 2},
                  {const_cast<void *>(data), len},
                  {const_cast<char *>(crlf), 2}};
  const int e = send_all(fd_, iov, 3);
  if (e != 0) {
    // Part of the command may be out: the stream cannot be resumed.
    broken_ = true;
    if (e == EAGAIN)
      psb_set_error(&broken_err_,
                "redis: PUBLISH to %s: redis-server at %s did not take the message within %d s "
                "(stopped?); the publisher connection is given up",
                channel_.c_str(), settings_.address().c_str(), kIoTimeoutS);
    else
      psb_set_error(&broken_err_, "redis: PUBLISH to %s: the connection to redis-server at %s broke: %s",
                channel_.c_str(), settings_.address().c_str(), std::strerror(e));
    return fail(err);
  }
  ++pending_;
  return 0;
}

int Writer::matched_readers() {
  if (broken_) return -1;
  psb_error err{};
  // Replies come in order: the PUBLISH ones first, then this command's.
  if (await_replies(int64_t(kIoTimeoutS) * 1000000000, &err) != 1) {
    if (!broken_) {
      broken_ = true;
      broken_err_ = err;
    }
    return -1;
  }
  const char *argv[3] = {"PUBSUB", "NUMSUB", channel_.c_str()};
  const size_t argvlen[3] = {6, 6, channel_.size()};
  redisReply *r = command(c_, settings_, "publisher", 3, argv, argvlen, &err);
  if (r == nullptr) {
    broken_ = true;
    broken_err_ = err;
    return -1;
  }
  int count = -1;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[1]->type == REDIS_REPLY_INTEGER)
    count = static_cast<int>(r->element[1]->integer);
  else if (r->type == REDIS_REPLY_ERROR) {
    broken_ = true;
    psb_set_error(&broken_err_, "redis: PUBSUB NUMSUB %s: %s", channel_.c_str(), r->str);
  }
  freeReplyObject(r);
  return count;
}

}  // namespace psbredis
