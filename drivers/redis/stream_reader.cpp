#include "stream_reader.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "connection.h"

namespace psbredis {
namespace {

using psb::sdk::fail;

constexpr size_t kReadChunk = 256 * 1024;
constexpr size_t kEntryFraming = 96;  // RESP around one entry: id, field name, lengths
constexpr size_t kBatchBytes = 4194304;
constexpr size_t kMaxCount = 64;

std::string bulk(const std::string &s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

bool is_string(const redisReply *r) { return r != nullptr && r->type == REDIS_REPLY_STRING; }

// [key, [[id, [field, value, ...]], ...]]: the entries, or nullptr when malformed.
const redisReply *entries_of(const redisReply *r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 1) return nullptr;
  const redisReply *s = r->element[0];
  if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 || s->element[1]->type != REDIS_REPLY_ARRAY)
    return nullptr;
  const redisReply *e = s->element[1];
  for (size_t i = 0; i < e->elements; ++i) {
    const redisReply *x = e->element[i];
    if (x->type != REDIS_REPLY_ARRAY || x->elements != 2 || !is_string(x->element[0]) ||
        x->element[0]->len >= 48 || x->element[1]->type != REDIS_REPLY_ARRAY ||
        x->element[1]->elements < 2 || !is_string(x->element[1]->element[1]))
      return nullptr;
  }
  return e;
}

// Errors a server gives while it starts: the connection is tried again.
bool transient(const char *error) {
  return std::strncmp(error, "LOADING", 7) == 0 || std::strncmp(error, "BUSY", 4) == 0 ||
         std::strncmp(error, "TRYAGAIN", 8) == 0;
}

}  // namespace

StreamReader::StreamReader(Context &ctx, const char *topic, psb::sdk::Listener listener) {
  const Settings &s = ctx.settings;
  if (bool(listener) != (s.notify == PSB_NOTIFY_LISTENER))
    fail("on_data must be given exactly in listener mode");
  settings_ = s;
  key_ = s.stream(topic);
  name_ = s.reader_name(topic);
  on_data_ = listener;
  const size_t size = s.max_payload > 0 ? s.max_payload : 1;
  count_ = kBatchBytes / size < 1           ? 1
           : kBatchBytes / size > kMaxCount ? kMaxCount
                                            : kBatchBytes / size;
  const std::string prefix = "*8\r\n" + bulk("XREAD") + bulk("COUNT") +
                             bulk(std::to_string(count_)) + bulk("BLOCK") + bulk("0") +
                             bulk("STREAMS") + bulk(key_);
  xread_prefix_ = prefix.size();
  xread_.assign(prefix.size() + 64, '\0');
  std::memcpy(xread_.data(), prefix.data(), prefix.size());
  rbuf_.assign(kReadChunk, '\0');

  // Where it joins: the stream's last entry (none yet: 0-0); it reads what comes after.
  redisContext *probe = connect_server(s, "stream reader");
  const char *argv[5] = {"XREVRANGE", key_.c_str(), "+", "-", "COUNT"};
  const char *argv6[6] = {argv[0], argv[1], argv[2], argv[3], argv[4], "1"};
  const size_t lens[6] = {9, key_.size(), 1, 1, 5, 1};
  redisReply *r = nullptr;
  try {
    r = command(probe, s, "stream reader", 6, argv6, lens);
  } catch (...) {
    redisFree(probe);
    throw;
  }
  std::string error;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
      r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 &&
      is_string(r->element[0]->element[0]) && r->element[0]->element[0]->len < sizeof last_id_) {
    last_id_len_ = r->element[0]->element[0]->len;
    std::memcpy(last_id_, r->element[0]->element[0]->str, last_id_len_);
  } else if (r->type != REDIS_REPLY_ARRAY || r->elements != 0) {
    error = format("XREVRANGE %s: %s", key_.c_str(),
                   r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
  }
  freeReplyObject(r);
  redisFree(probe);
  if (!error.empty()) throw psb::sdk::Error(error);

  try {
    if (on_data_) stop_.emplace();
    if (!reconnect())
      fail("cannot read %s from redis-server at %s: %s", key_.c_str(), s.address().c_str(),
           down_why_.c_str());
    reconnects_ = 0;  // the first connection
    if (on_data_) listener_.start(on_data_, [this] { listen(); });
  } catch (...) {
    tear_down();
    throw;
  }
}

StreamReader::~StreamReader() { tear_down(); }

void StreamReader::tear_down() {
  if (stop_) stop_->signal();  // ends a wait at once
  listener_.stop();
  free_batch();
  if (c_ != nullptr) redisFree(c_);
  c_ = nullptr;
}

void StreamReader::free_batch() {
  if (batch_ != nullptr) freeReplyObject(batch_);
  batch_ = nullptr;
  index_ = 0;
}

void StreamReader::drop(std::string why) {
  if (c_ != nullptr) redisFree(c_);
  c_ = nullptr;
  fd_ = -1;
  read_first_ = false;
  down_why_ = std::move(why);
  pacer_.lost();  // the first attempt may follow at once
}

void StreamReader::make_room() {
  // Room for one batch plus one read, so hiredis's buffer does not grow while reading.
  redisReader *rd = c_->reader;
  const size_t room = count_ * (settings_.max_payload + kEntryFraming) + key_.size() + kReadChunk;
  sds grown = sdsMakeRoomFor(rd->buf, room);
  if (grown == nullptr) fail("out of memory for a %zu-byte read buffer", room);
  rd->buf = grown;
  std::memset(grown + sdslen(grown), 0, sdsavail(grown));
}

bool StreamReader::reconnect() {
  if (!pacer_.due()) return false;
  pacer_.attempted();
  redisContext *c = try_connect(settings_, kReconnectTimeoutMs, &down_why_);
  if (c == nullptr) return false;
  const char *argv[3] = {"CLIENT", "SETNAME", name_.c_str()};
  const size_t argvlen[3] = {6, 7, name_.size()};
  redisReply *r = nullptr;
  try {
    r = command(c, settings_, "stream reader", 3, argv, argvlen);
  } catch (const std::exception &e) {
    down_why_ = e.what();
    redisFree(c);
    return false;
  }
  const bool named = r->type != REDIS_REPLY_ERROR;
  if (!named) down_why_ = format("CLIENT SETNAME: %s", r->str);
  freeReplyObject(r);
  if (!named) {
    redisFree(c);
    return false;
  }
  c_ = c;
  fd_ = c->fd;
  make_room();
  ++reconnects_;
  return send_xread();
}

bool StreamReader::send_xread() {
  // "$<n>\r\n<id>\r\n" after the prefix; an id is shorter than 48 characters.
  char *p = xread_.data() + xread_prefix_;
  size_t n = 0;
  p[n++] = '$';
  if (last_id_len_ >= 10) p[n++] = static_cast<char>('0' + last_id_len_ / 10);
  p[n++] = static_cast<char>('0' + last_id_len_ % 10);
  p[n++] = '\r';
  p[n++] = '\n';
  std::memcpy(p + n, last_id_, last_id_len_);
  std::memcpy(p + n + last_id_len_, "\r\n", 2);
  iovec iov{xread_.data(), xread_prefix_ + n + last_id_len_ + 2};
  const int e = send_all(fd_, &iov, 1);
  if (e == 0) return true;
  drop(e == EAGAIN ? std::string("it took no XREAD (timed out)") : std::string(std::strerror(e)));
  return false;
}

bool StreamReader::read_some() {
  const ssize_t n = recv(fd_, rbuf_.data(), rbuf_.size(), MSG_DONTWAIT);
  if (n > 0) {
    read_first_ = static_cast<size_t>(n) == rbuf_.size();
    if (redisReaderFeed(c_->reader, rbuf_.data(), static_cast<size_t>(n)) != REDIS_OK)
      fail("stream reader of %s: %s", key_.c_str(), c_->reader->errstr);
    return true;
  }
  read_first_ = false;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  drop(n == 0 ? std::string("it closed the connection (stopped or killed?)")
              : std::string(std::strerror(errno)));
  return false;
}

void StreamReader::accept(redisReply *r) {
  if (r->type == REDIS_REPLY_ERROR) {
    if (transient(r->str)) {
      drop(r->str);
      freeReplyObject(r);
      return;
    }
    const std::string m = format("XREAD %s: redis-server says: %s", key_.c_str(), r->str);
    freeReplyObject(r);
    throw psb::sdk::Error(m);
  }
  if (r->type == REDIS_REPLY_NIL) {  // BLOCK ended without an entry: read again
    freeReplyObject(r);
    send_xread();
    return;
  }
  const redisReply *entries = entries_of(r);
  if (entries == nullptr) {
    freeReplyObject(r);
    fail("XREAD %s: a reply that is not a stream's entries", key_.c_str());
  }
  if (entries->elements > 0) {
    const redisReply *id = entries->element[entries->elements - 1]->element[0];
    std::memcpy(last_id_, id->str, id->len);
    last_id_len_ = id->len;
  }
  batch_ = r;
  index_ = 0;
  send_xread();  // the server blocks on the next one while this batch is handed out
}

bool StreamReader::next(int64_t timeout_ns, const void *&data, size_t &len) {
  const bool forever = timeout_ns < 0;
  const int64_t end = timeout_ns > 0 ? now_ns() + timeout_ns : now_ns();
  for (;;) {
    if (batch_ != nullptr) {
      const redisReply *entries = batch_->element[0]->element[1];
      if (index_ < entries->elements) {
        const redisReply *value = entries->element[index_++]->element[1]->element[1];
        data = value->str;
        len = value->len;
        return true;
      }
      free_batch();
    }
    if (c_ == nullptr && !reconnect()) {
      if (forever ? listener_.stopping() : now_ns() >= end) return false;
      const int64_t until = forever || pacer_.next_ns() < end ? pacer_.next_ns() : end;
      if (!psb::sdk::pause_until(until, stop_ ? stop_->fd() : -1)) return false;
      continue;
    }
    if (c_ == nullptr) continue;  // dropped while sending XREAD
    void *got = nullptr;
    if (redisReaderGetReply(c_->reader, &got) != REDIS_OK) {
      drop(format("protocol error: %s", c_->reader->errstr));
      continue;
    }
    if (got != nullptr) {
      accept(static_cast<redisReply *>(got));
      continue;
    }
    if (timeout_ns == 0 || read_first_) {
      if (read_some() || c_ == nullptr) continue;
      if (timeout_ns == 0) return false;
    }
    int64_t left = -1;
    if (!forever) {
      left = end - now_ns();
      if (left <= 0) return false;
    }
    const int w = wait_readable(fd_, stop_ ? stop_->fd() : -1, left);
    if (w == 0 || w == 2) return false;  // timeout, a signal, or a stop request
    if (w < 0) fail("waiting on the stream reader of %s: %s", key_.c_str(), std::strerror(errno));
    read_some();
  }
}

bool StreamReader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) fail("take() is not used in listener mode");
  return next(timeout_ns, data, len);
}

void StreamReader::release() {
  if (batch_ != nullptr && index_ >= batch_->element[0]->element[1]->elements) free_batch();
}

void StreamReader::counters(psb::sdk::CounterSink put) const { put("reconnects", reconnects_); }

void StreamReader::listen() {
  try {
    while (!listener_.stopping()) {
      const void *data;
      size_t len;
      if (next(-1, data, len)) {
        on_data_(data, len);
        release();
      }
    }
  } catch (const std::exception &e) {
    on_data_.error("%s; the listener of %s stops", e.what(), key_.c_str());
  }
}

}  // namespace psbredis
