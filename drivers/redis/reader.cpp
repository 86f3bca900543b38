#include "reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "connection.h"

namespace psbredis {
namespace {

// Bytes taken from the socket per recv(): a 4 MiB message arrives in 16 reads or fewer.
constexpr size_t kReadChunk = 256 * 1024;
// RESP around a message: "*3\r\n$7\r\nmessage\r\n$<n>\r\n<channel>\r\n$<n>\r\n...\r\n".
constexpr size_t kFraming = 64;
// hiredis's reader moves its unread bytes to the front once it has consumed this many.
constexpr size_t kReaderCompaction = 1024;
constexpr size_t kEntryFraming = 96;  // RESP around one stream entry: id, field name, lengths
constexpr size_t kBatchBytes = 4194304;
constexpr size_t kMaxCount = 64;

bool is_string(const redisReply *r) { return r != nullptr && r->type == REDIS_REPLY_STRING; }

// A pub/sub push of three elements, the first naming its kind ("message", "subscribe").
bool is_push(const redisReply *r, std::string_view kind) {
  return r->type == REDIS_REPLY_ARRAY && r->elements == 3 && is_string(r->element[0]) &&
         std::string_view(r->element[0]->str, r->element[0]->len) == kind;
}

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

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
    : Endpoint(ctx.settings, topic, "subscriber", "stream reader"), on_data_(listener) {
  if (bool(listener) != (settings_.notify == PSB_NOTIFY_LISTENER))
    fail("on_data must be given exactly in listener mode");
  rbuf_.assign(kReadChunk, '\0');
  try {
    if (streams_)
      join_stream();
    else
      subscribe();
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
  batch_.reset();
  c_.reset();  // pub/sub: closing the connection ends the subscription
}

void Reader::subscribe() {
  connect();
  // SUBSCRIBE and its confirmation: once the server has answered, every later PUBLISH
  // on the channel reaches this connection. Messages that follow the confirmation in
  // the same read stay in hiredis's buffer, where next() looks first.
  const Reply r = command(c_.get(), settings_, "subscriber", {"SUBSCRIBE", name_});
  if (!is_push(r.get(), "subscribe"))
    fail("SUBSCRIBE %s was not confirmed: %s", name_.c_str(),
         error_or(r.get(), "unexpected reply"));
  make_room();
}

void Reader::join_stream() {
  const size_t size = settings_.max_payload > 0 ? settings_.max_payload : 1;
  count_ = std::clamp<size_t>(kBatchBytes / size, 1, kMaxCount);
  xread_.emplace(std::initializer_list<std::string_view>{"XREAD", "COUNT", std::to_string(count_),
                                                         "BLOCK", "0", "STREAMS", name_});
  // Where it joins: the stream's last entry (none yet: 0-0); it reads what comes after.
  {
    const Link probe = connect_server(settings_, "stream reader");
    const Reply r = command(probe.get(), settings_, "stream reader",
                            {"XREVRANGE", name_, "+", "-", "COUNT", "1"});
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 &&
        is_string(r->element[0]->element[0]) && r->element[0]->element[0]->len < sizeof last_id_) {
      last_id_len_ = r->element[0]->element[0]->len;
      std::memcpy(last_id_, r->element[0]->element[0]->str, last_id_len_);
    } else if (r->type != REDIS_REPLY_ARRAY || r->elements != 0) {
      fail("XREVRANGE %s: %s", name_.c_str(), error_or(r.get(), "unexpected reply"));
    }
  }
  if (!reconnect())
    fail("cannot read %s from redis-server at %s: %s", name_.c_str(), settings_.server(),
         down_why_.c_str());
  reconnects_ = 0;  // the first connection
}

void Reader::make_room() {
  // Room for the largest message (streams: one batch) plus one read, so hiredis's buffer
  // never grows on the timed path; touched now so the first large one does not page-fault.
  const size_t room =
      streams_ ? count_ * (settings_.max_payload + kEntryFraming) + name_.size() + kReadChunk
               : settings_.max_payload + name_.size() + kFraming + kReaderCompaction + kReadChunk;
  redisReader *rd = c_->reader;
  sds grown = sdsMakeRoomFor(rd->buf, room);
  if (grown == nullptr) fail("out of memory for a %zu-byte read buffer", room);
  rd->buf = grown;
  std::memset(grown + sdslen(grown), 0, sdsavail(grown));
}

bool Reader::reconnect() {
  if (!connect_again({"CLIENT", "SETNAME", reader_name_}, "CLIENT SETNAME: ")) return false;
  read_first_ = false;
  make_room();
  return send_xread();
}

bool Reader::send_xread() {
  const int e = xread_->send(fd_, last_id_, last_id_len_);
  if (e == 0) return true;
  lose(e == EAGAIN ? std::string("it took no XREAD (timed out)") : std::string(std::strerror(e)));
  return false;
}

bool Reader::read_some() {
  const size_t n = receive(rbuf_.data(), rbuf_.size(),
                           "stopped or killed, or it dropped a subscriber over its "
                           "client-output-buffer-limit pubsub");
  read_first_ = n == rbuf_.size();
  if (n > 0 && redisReaderFeed(c_->reader, rbuf_.data(), n) != REDIS_OK)
    fail("%s of %s: %s", role(), name_.c_str(), c_->reader->errstr);
  return n > 0;
}

void Reader::accept(Reply r) {
  if (!streams_) {
    if (is_push(r.get(), "message") && is_string(r->element[2])) {
      batch_ = std::move(r);
      index_ = 0;
    } else if (r->type == REDIS_REPLY_ERROR) {
      fail("subscriber of %s: redis-server says: %s", name_.c_str(), r->str);
    }  // else not a message (e.g. a confirmation): skipped
    return;
  }
  if (r->type == REDIS_REPLY_ERROR) {
    if (!transient(r->str)) fail("XREAD %s: redis-server says: %s", name_.c_str(), r->str);
    lose(r->str);
    return;
  }
  if (r->type == REDIS_REPLY_NIL) {  // BLOCK ended without an entry: read again
    send_xread();
    return;
  }
  const redisReply *entries = entries_of(r.get());
  if (entries == nullptr) fail("XREAD %s: a reply that is not a stream's entries", name_.c_str());
  if (entries->elements > 0) {
    const redisReply *id = entries->element[entries->elements - 1]->element[0];
    std::memcpy(last_id_, id->str, id->len);
    last_id_len_ = id->len;
  }
  batch_ = std::move(r);
  index_ = 0;
  send_xread();  // the server blocks on the next one while this batch is handed out
}

bool Reader::next(int64_t timeout_ns, const void *&data, size_t &len) {
  const bool forever = timeout_ns < 0;
  const int64_t end = timeout_ns > 0 ? now_ns() + timeout_ns : now_ns();
  for (;;) {
    if (batch_ != nullptr) {
      if (index_ < batch_size()) {
        const redisReply *value =
            streams_ ? batch_->element[0]->element[1]->element[index_]->element[1]->element[1]
                     : batch_->element[2];
        ++index_;
        data = value->str;
        len = value->len;
        return true;
      }
      batch_.reset();
    }
    if (c_ == nullptr && !reconnect()) {  // streams only: pub/sub fails instead of dropping
      if (forever ? listener_.stopping() : now_ns() >= end) return false;
      const int64_t until = forever || pacer_.next_ns() < end ? pacer_.next_ns() : end;
      if (!psb::sdk::pause_until(until, stop_ ? stop_->fd() : -1)) return false;
      continue;
    }
    if (c_ == nullptr) continue;  // dropped while sending XREAD
    // What hiredis already holds comes first: one read may have brought several.
    void *got = nullptr;
    if (redisReaderGetReply(c_->reader, &got) != REDIS_OK) {
      if (!streams_)
        fail("protocol error on the subscriber connection of %s: %s", name_.c_str(),
             c_->reader->errstr);
      lose(format("protocol error: %s", c_->reader->errstr));
      continue;
    }
    if (got != nullptr) {
      accept(Reply(static_cast<redisReply *>(got)));
      continue;
    }
    // poll mode, or the last read filled the buffer: read straight away.
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
    if (w == 0 || w == 2) return false;  // timeout, a signal (EINTR), or a stop request
    if (w < 0) fail("waiting on the %s of %s: %s", role(), name_.c_str(), std::strerror(errno));
    read_some();
  }
}

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) fail("take() is not used in listener mode");
  return next(timeout_ns, data, len);
}

void Reader::release() {
  if (batch_ != nullptr && index_ >= batch_size()) batch_.reset();
}

void Reader::counters(psb::sdk::CounterSink put) const {
  if (streams_) put("reconnects", reconnects_);
}

void Reader::listen() {  // what it throws ends it, reported by the ListenerThread
  while (!listener_.stopping()) {
    const void *data;
    size_t len;
    if (next(-1, data, len)) {
      on_data_(data, len);
      release();
    }
  }
}

}  // namespace psbredis
