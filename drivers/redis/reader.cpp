#include "reader.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "connection.h"
#include "psbench/driver_support.h"

namespace psbredis {
namespace {

// Bytes taken from the socket per recv(): a 4 MiB message arrives in 16 reads or fewer.
constexpr size_t kReadChunk = 256 * 1024;
// RESP around a message: "*3\r\n$7\r\nmessage\r\n$<n>\r\n<channel>\r\n$<n>\r\n...\r\n".
constexpr size_t kFraming = 64;
// hiredis's reader moves its unread bytes to the front once it has consumed this many.
constexpr size_t kReaderCompaction = 1024;

bool is_message(const redisReply *r) {
  return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
         r->element[0]->type == REDIS_REPLY_STRING && r->element[0]->len == 7 &&
         std::memcmp(r->element[0]->str, "message", 7) == 0 &&
         r->element[2]->type == REDIS_REPLY_STRING;
}

bool confirms_subscription(const redisReply *r) {
  return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
         r->element[0]->type == REDIS_REPLY_STRING && r->element[0]->len == 9 &&
         std::memcmp(r->element[0]->str, "subscribe", 9) == 0;
}

}  // namespace

Reader *Reader::create(Context *ctx, const char *topic, psb_on_data on_data, void *user,
                       psb_error *err) {
  const Settings &s = ctx->settings;
  if ((on_data != nullptr) != (s.notify == PSB_NOTIFY_LISTENER)) {
    psb_set_error(err, "redis: on_data must be given exactly in listener mode");
    return nullptr;
  }
  std::unique_ptr<Reader> r(new Reader());
  r->settings_ = s;
  r->channel_ = s.channel(topic);
  r->on_data_ = on_data;
  r->user_ = user;
  r->c_ = connect_server(s, "subscriber", err);
  if (r->c_ == nullptr) return nullptr;
  r->fd_ = r->c_->fd;

  // SUBSCRIBE and its confirmation: once the server has answered, every later PUBLISH
  // on the channel reaches this connection. Messages that follow the confirmation in
  // the same read stay in hiredis's buffer, where next() looks first.
  const char *argv[2] = {"SUBSCRIBE", r->channel_.c_str()};
  const size_t argvlen[2] = {9, r->channel_.size()};
  redisReply *reply = command(r->c_, s, "subscriber", 2, argv, argvlen, err);
  if (reply == nullptr) return nullptr;
  const bool confirmed = confirms_subscription(reply);
  if (!confirmed)
    psb_set_error(err, "redis: SUBSCRIBE %s was not confirmed: %s", r->channel_.c_str(),
              reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
  freeReplyObject(reply);
  if (!confirmed) return nullptr;

  // Room for the largest message plus one read, so hiredis's buffer never grows on
  // the timed path; touched now so the first large message does not page-fault.
  redisReader *rd = r->c_->reader;
  const size_t room = s.max_payload + r->channel_.size() + kFraming + kReaderCompaction + kReadChunk;
  sds grown = sdsMakeRoomFor(rd->buf, room);
  if (grown == nullptr) {
    psb_set_error(err, "redis: out of memory for a %zu-byte read buffer", room);
    return nullptr;
  }
  rd->buf = grown;
  std::memset(grown + sdslen(grown), 0, sdsavail(grown));
  r->rbuf_.assign(kReadChunk, '\0');

  if (on_data != nullptr) {
    r->stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (r->stop_fd_ < 0) {
      psb_set_error(err, "redis: eventfd for the listener: %s", std::strerror(errno));
      return nullptr;
    }
    r->thread_ = std::thread([p = r.get()] { p->listen(); });
  }
  ctx->link(r.get());
  return r.release();
}

Reader::~Reader() {
  if (ctx != nullptr) ctx->unlink(this);
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_release);
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);  // ends a wait at once
    thread_.join();
  }
  if (held_ != nullptr) freeReplyObject(held_);
  if (c_ != nullptr) redisFree(c_);  // closing the connection ends the subscription
  if (stop_fd_ >= 0) close(stop_fd_);
}

int Reader::read_some(psb_error *err) {
  const ssize_t n = recv(fd_, rbuf_.data(), rbuf_.size(), MSG_DONTWAIT);
  if (n > 0) {
    read_first_ = static_cast<size_t>(n) == rbuf_.size();
    if (redisReaderFeed(c_->reader, rbuf_.data(), static_cast<size_t>(n)) != REDIS_OK) {
      psb_set_error(err, "redis: subscriber of %s: %s", channel_.c_str(), c_->reader->errstr);
      return -1;
    }
    return 1;
  }
  read_first_ = false;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
  if (n == 0)
    psb_set_error(err,
              "redis: redis-server at %s closed the subscriber connection of %s (stopped or "
              "killed, or it dropped a subscriber over its client-output-buffer-limit pubsub)",
              settings_.address().c_str(), channel_.c_str());
  else
    psb_set_error(err, "redis: subscriber connection of %s to %s: %s", channel_.c_str(),
              settings_.address().c_str(), std::strerror(errno));
  return -1;
}

int Reader::next(int64_t timeout_ns, redisReply **out, psb_error *err) {
  const int64_t end = timeout_ns > 0 ? now_ns() + timeout_ns : 0;
  for (;;) {
    // What hiredis already holds comes first: one read may have brought several.
    void *got = nullptr;
    if (redisReaderGetReply(c_->reader, &got) != REDIS_OK) {
      psb_set_error(err, "redis: protocol error on the subscriber connection of %s: %s",
                channel_.c_str(), c_->reader->errstr);
      return -1;
    }
    if (got != nullptr) {
      auto *r = static_cast<redisReply *>(got);
      if (is_message(r)) {
        *out = r;
        return 1;
      }
      if (r->type == REDIS_REPLY_ERROR) {
        psb_set_error(err, "redis: subscriber of %s: redis-server says: %s", channel_.c_str(), r->str);
        freeReplyObject(r);
        return -1;
      }
      freeReplyObject(r);  // not a message (e.g. a confirmation): skipped
      continue;
    }
    // poll mode, or the last read filled the buffer: read straight away.
    if (timeout_ns == 0 || read_first_) {
      const int n = read_some(err);
      if (n < 0) return -1;
      if (n > 0) continue;
      if (timeout_ns == 0) return 0;
    }
    int64_t left = -1;
    if (timeout_ns > 0) {
      left = end - now_ns();
      if (left <= 0) return 0;
    }
    const int w = wait_readable(fd_, stop_fd_, left);
    if (w == 0 || w == 2) return 0;  // timeout, a signal (EINTR), or a stop request
    if (w < 0) {
      psb_set_error(err, "redis: waiting on the subscriber of %s: %s", channel_.c_str(),
                std::strerror(errno));
      return -1;
    }
    if (read_some(err) < 0) return -1;
  }
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  if (on_data_ != nullptr) {
    psb_set_error(err, "redis: take() is not used in listener mode");
    return -1;
  }
  if (held_ != nullptr) {
    freeReplyObject(held_);
    held_ = nullptr;
  }
  redisReply *r = nullptr;
  const int got = next(timeout_ns, &r, err);
  if (got == 1) {
    held_ = r;
    *data = r->element[2]->str;
    *len = r->element[2]->len;
  }
  return got;
}

void Reader::release() {
  if (held_ != nullptr) {
    freeReplyObject(held_);
    held_ = nullptr;
  }
}

void Reader::listen() {
  psb_error err{};
  while (!stop_.load(std::memory_order_acquire)) {
    redisReply *r = nullptr;
    const int got = next(-1, &r, &err);
    if (got == 1) {
      on_data_(user_, r->element[2]->str, r->element[2]->len);
      freeReplyObject(r);
    } else if (got < 0) {
      // Nobody to return the error to: say it once, and stop delivering.
      std::fprintf(stderr, "%s; the listener of %s stops\n", err.message, channel_.c_str());
      return;
    }
  }
}

}  // namespace psbredis
