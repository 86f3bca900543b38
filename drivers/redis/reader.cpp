#include "reader.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "connection.h"

namespace psbredis {
namespace {

using psb::sdk::fail;

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

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener listener) {
  const Settings &s = ctx.settings;
  if (bool(listener) != (s.notify == PSB_NOTIFY_LISTENER))
    fail("on_data must be given exactly in listener mode");
  settings_ = s;
  channel_ = s.channel(topic);
  on_data_ = listener;
  c_ = connect_server(s, "subscriber");
  try {
    fd_ = c_->fd;

    // SUBSCRIBE and its confirmation: once the server has answered, every later PUBLISH
    // on the channel reaches this connection. Messages that follow the confirmation in
    // the same read stay in hiredis's buffer, where next() looks first.
    const char *argv[2] = {"SUBSCRIBE", channel_.c_str()};
    const size_t argvlen[2] = {9, channel_.size()};
    redisReply *reply = command(c_, s, "subscriber", 2, argv, argvlen);
    if (!confirms_subscription(reply)) {
      const std::string m =
          format("SUBSCRIBE %s was not confirmed: %s", channel_.c_str(),
                 reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply");
      freeReplyObject(reply);
      throw psb::sdk::Error(m);
    }
    freeReplyObject(reply);

    // Room for the largest message plus one read, so hiredis's buffer never grows on
    // the timed path; touched now so the first large message does not page-fault.
    redisReader *rd = c_->reader;
    const size_t room = s.max_payload + channel_.size() + kFraming + kReaderCompaction + kReadChunk;
    sds grown = sdsMakeRoomFor(rd->buf, room);
    if (grown == nullptr) fail("out of memory for a %zu-byte read buffer", room);
    rd->buf = grown;
    std::memset(grown + sdslen(grown), 0, sdsavail(grown));
    rbuf_.assign(kReadChunk, '\0');

    if (on_data_) {
      stop_.emplace();
      listener_.start(on_data_, [this] { listen(); });
    }
  } catch (...) {
    tear_down();
    throw;
  }
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() {
  if (stop_) stop_->signal();  // ends a wait at once
  listener_.stop();
  if (held_ != nullptr) freeReplyObject(held_);
  held_ = nullptr;
  if (c_ != nullptr) redisFree(c_);  // closing the connection ends the subscription
  c_ = nullptr;
}

bool Reader::read_some() {
  const ssize_t n = recv(fd_, rbuf_.data(), rbuf_.size(), MSG_DONTWAIT);
  if (n > 0) {
    read_first_ = static_cast<size_t>(n) == rbuf_.size();
    if (redisReaderFeed(c_->reader, rbuf_.data(), static_cast<size_t>(n)) != REDIS_OK)
      fail("subscriber of %s: %s", channel_.c_str(), c_->reader->errstr);
    return true;
  }
  read_first_ = false;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n == 0)
    fail(
        "redis-server at %s closed the subscriber connection of %s (stopped or "
        "killed, or it dropped a subscriber over its client-output-buffer-limit pubsub)",
        settings_.address().c_str(), channel_.c_str());
  fail("subscriber connection of %s to %s: %s", channel_.c_str(), settings_.address().c_str(),
       std::strerror(errno));
}

bool Reader::next(int64_t timeout_ns, redisReply **out) {
  const int64_t end = timeout_ns > 0 ? now_ns() + timeout_ns : 0;
  for (;;) {
    // What hiredis already holds comes first: one read may have brought several.
    void *got = nullptr;
    if (redisReaderGetReply(c_->reader, &got) != REDIS_OK)
      fail("protocol error on the subscriber connection of %s: %s", channel_.c_str(),
           c_->reader->errstr);
    if (got != nullptr) {
      auto *r = static_cast<redisReply *>(got);
      if (is_message(r)) {
        *out = r;
        return true;
      }
      if (r->type == REDIS_REPLY_ERROR) {
        const std::string m =
            format("subscriber of %s: redis-server says: %s", channel_.c_str(), r->str);
        freeReplyObject(r);
        throw psb::sdk::Error(m);
      }
      freeReplyObject(r);  // not a message (e.g. a confirmation): skipped
      continue;
    }
    // poll mode, or the last read filled the buffer: read straight away.
    if (timeout_ns == 0 || read_first_) {
      if (read_some()) continue;
      if (timeout_ns == 0) return false;
    }
    int64_t left = -1;
    if (timeout_ns > 0) {
      left = end - now_ns();
      if (left <= 0) return false;
    }
    const int w = wait_readable(fd_, stop_ ? stop_->fd() : -1, left);
    if (w == 0 || w == 2) return false;  // timeout, a signal (EINTR), or a stop request
    if (w < 0) fail("waiting on the subscriber of %s: %s", channel_.c_str(), std::strerror(errno));
    read_some();
  }
}

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) fail("take() is not used in listener mode");
  if (held_ != nullptr) {
    freeReplyObject(held_);
    held_ = nullptr;
  }
  redisReply *r = nullptr;
  if (!next(timeout_ns, &r)) return false;
  held_ = r;
  data = r->element[2]->str;
  len = r->element[2]->len;
  return true;
}

void Reader::release() {
  if (held_ != nullptr) {
    freeReplyObject(held_);
    held_ = nullptr;
  }
}

void Reader::listen() {
  try {
    while (!listener_.stopping()) {
      redisReply *r = nullptr;
      if (next(-1, &r)) {
        on_data_(r->element[2]->str, r->element[2]->len);
        freeReplyObject(r);
      }
    }
  } catch (const std::exception &e) {
    on_data_.error("%s; the listener of %s stops", e.what(), channel_.c_str());
  }
}

}  // namespace psbredis
