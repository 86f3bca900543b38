#include "writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbredis {

Writer::Writer(Context &ctx, const char *topic)
    : Endpoint(ctx.settings, topic, "publisher", "stream writer"),
      command_(streams_ ? Command{"XADD", name_, "MAXLEN", "~",
                                  std::to_string(settings_.stream_bound()), "*", "d"}
                        : Command{"PUBLISH", name_}) {
  connect();
  if (!streams_) return;
  slot_size_ = settings_.max_payload > 0 ? settings_.max_payload : kMaxPayload;
  slots_ = std::clamp<uint64_t>(kRingBytes / slot_size_, 1, kWindow);
  ring_.assign(slots_ * slot_size_, '\0');  // touched now: no page fault while writing
  lens_.assign(slots_, 0);
}

Writer::~Writer() {
  // Every command answered means the server has taken every message from this socket;
  // closing with unread replies would send a reset instead of a FIN.
  if (c_ != nullptr && broken_message_.empty()) {
    try {
      drain(2'000'000'000);
    } catch (const std::exception &) {
    }
  }
}

bool Writer::send(const void *data, size_t len) {
  const int e = command_.send(fd_, data, len);
  if (e == 0) {
    ++sent_;
    return true;
  }
  // Part of the command may be out: the connection cannot be resumed.
  if (!streams_ && e == EAGAIN)
    break_with(
        format("PUBLISH to %s: redis-server at %s did not take the message within %d "
               "s (stopped?); the publisher connection is given up",
               name_.c_str(), settings_.server(), kIoTimeoutS));
  if (!streams_)
    break_with(format("PUBLISH to %s: the connection to redis-server at %s broke: %s",
                      name_.c_str(), settings_.server(), std::strerror(e)));
  lose(e == EAGAIN ? format("it did not take the message within %d s", kIoTimeoutS)
                   : std::string(std::strerror(e)));
  return false;
}

bool Writer::send_slot(uint64_t i) {
  const uint64_t slot = (head_ + i) % slots_;
  return send(ring_.data() + slot * slot_size_, lens_[slot]);
}

bool Writer::reconnect() {
  // A server that has just started answers LOADING to EXISTS until it has read its data.
  if (!connect_again({"EXISTS", name_})) return false;
  sent_ = 0;  // what was sent and not answered stays in the ring, to be sent again
  lines_.clear();
  bulk_next_ = false;
  // Everything unanswered, oldest first: the server may have kept some of it (then the
  // reader gets it twice), the rest it never had.
  while (c_ != nullptr && sent_ < pending_) {
    if (!send_slot(sent_)) return false;
    ++resent_;
  }
  return true;
}

void Writer::consume(const char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!lines_.feed(p[i])) continue;
    const char *line = lines_.line();
    const size_t len = lines_.size();
    if (bulk_next_) {  // XADD's reply: the new entry's id
      bulk_next_ = false;
      answered();
      ++acknowledged_;
      continue;
    }
    if (sent_ > 0 && len >= 2 && line[0] == (streams_ ? '$' : ':')) {
      bulk_next_ = streams_ && line[1] != '-';  // "$-1": a nil reply, no content line
      if (!bulk_next_) answered();              // PUBLISH's: the number of receivers
      continue;
    }
    if (sent_ > 0 && len >= (streams_ ? 1u : 2u) && line[0] == '-') {
      answered();
      ++refused_;
      if (refusal_.empty())
        refusal_ = format("redis-server refused %s to %s: %s", streams_ ? "an XADD" : "a PUBLISH",
                          name_.c_str(), line + 1);
      continue;
    }
    if (!streams_)
      break_with(
          format("unexpected reply on the publisher connection of %s: '%s' (%llu "
                 "PUBLISH replies awaited)",
                 name_.c_str(), line, static_cast<unsigned long long>(pending_)));
    lose(format("unexpected reply '%s' (%llu XADD replies awaited)", line,
                static_cast<unsigned long long>(sent_)));
    return;
  }
}

void Writer::answered() {
  head_ = (head_ + 1) % slots_;
  --pending_;
  --sent_;
}

void Writer::read_replies() {
  while (c_ != nullptr) {
    const size_t n = receive(rbuf_, sizeof rbuf_, "stopped or killed?");
    if (n == 0) return;
    consume(rbuf_, n);
  }
}

void Writer::throw_refusal(const char *then) {
  const std::string m = refusal_ + then;
  refusal_.clear();
  throw psb::sdk::Error(m);
}

void Writer::write(const void *data, size_t len) {
  if (!broken_message_.empty()) throw psb::sdk::Error(broken_message_);
  if (len > slot_size_)
    fail("a %zu-byte message is over the %s largest of %llu bytes", len,
         streams_ ? "run's" : "driver's", static_cast<unsigned long long>(slot_size_));
  // The replies of earlier commands: a closed connection or a refusal shows here.
  read_replies();
  if (!refusal_.empty()) throw_refusal(streams_ ? "; this write was not sent" : "");
  if (!streams_) {
    send(data, len);
    ++pending_;
    return;
  }
  if (c_ == nullptr) reconnect();  // sends the ring again if it connects
  if (pending_ >= slots_) await_window();
  const uint64_t slot = (head_ + pending_) % slots_;
  std::memcpy(ring_.data() + slot * slot_size_, data, len);
  lens_[slot] = len;
  ++pending_;
  // Not connected, or the send failed: queued, sent again after the reconnect.
  if (c_ != nullptr && sent_ + 1 == pending_) send_slot(sent_);
}

void Writer::await_window() {
  const int64_t end = now_ns() + kWindowWaitNs;
  while (c_ != nullptr && pending_ >= slots_) {
    const int64_t left = end - now_ns();
    if (left <= 0)
      fail(
          "redis-server at %s did not answer %llu XADD to %s within %lld ms (the writer "
          "keeps at most %llu unanswered); this write was not sent",
          settings_.server(), static_cast<unsigned long long>(pending_), name_.c_str(),
          static_cast<long long>(kWindowWaitNs / 1000000), static_cast<unsigned long long>(slots_));
    if (wait_readable(fd_, -1, left) < 0)
      fail("waiting for XADD replies: %s", std::strerror(errno));
    read_replies();
  }
  if (pending_ >= slots_)
    fail(
        "XADD to %s: redis-server at %s is unreachable (%s) and the writer's %llu unanswered "
        "messages wait for it; this write was not accepted (it reconnects at most every %lld "
        "ms)",
        name_.c_str(), settings_.server(), down_why_.c_str(),
        static_cast<unsigned long long>(pending_), static_cast<long long>(kRetryNs / 1000000));
}

bool Writer::drain(int64_t timeout_ns) {
  if (!broken_message_.empty()) throw psb::sdk::Error(broken_message_);
  const int64_t end = now_ns() + timeout_ns;
  for (;;) {
    read_replies();
    if (!refusal_.empty()) throw_refusal("");
    if (pending_ == 0) return true;
    const int64_t left = end - now_ns();
    if (left <= 0 && !streams_)
      throw psb::sdk::Timeout(
          format("redis-server at %s did not answer %llu PUBLISH to %s within %lld ms",
                 settings_.server(), static_cast<unsigned long long>(pending_), name_.c_str(),
                 static_cast<long long>(timeout_ns / 1000000)));
    if (left <= 0)
      throw psb::sdk::Timeout(
          format("%llu XADD to %s not answered within %lld ms (redis-server at %s: %s)",
                 static_cast<unsigned long long>(pending_), name_.c_str(),
                 static_cast<long long>(timeout_ns / 1000000), settings_.server(),
                 c_ != nullptr ? "connected" : down_why_.c_str()));
    if (c_ == nullptr) {  // streams only: a pub/sub connection breaks instead
      if (!reconnect()) pacer_.sleep_until_due(left);
      continue;
    }
    if (wait_readable(fd_, -1, left) < 0)
      fail("waiting for %s replies: %s", streams_ ? "XADD" : "PUBLISH", std::strerror(errno));
  }
}

int Writer::matched() {
  if (streams_ ? c_ == nullptr && !reconnect() : !broken_message_.empty()) return -1;
  Reply r;
  bool drained = false;
  try {
    drain(int64_t(kIoTimeoutS) * 1000000000);  // replies come in order: the earlier ones first
    drained = true;
    if (c_ == nullptr) return -1;
    r = streams_ ? command(c_.get(), settings_, role(), {"CLIENT", "LIST"})
                 : command(c_.get(), settings_, role(), {"PUBSUB", "NUMSUB", name_});
  } catch (const std::exception &e) {
    if (streams_ && drained) lose(e.what());  // the command's connection failed
    if (!streams_ && broken_message_.empty()) broken_message_ = e.what();
    return -1;
  }
  int count = -1;
  if (streams_ && r->type == REDIS_REPLY_STRING) {
    // One line per connection: "id=5 addr=... name=<name> age=...".
    const std::string needle = " name=" + reader_name_ + " ";
    count = 0;
    for (const char *p = r->str; (p = std::strstr(p, needle.c_str())) != nullptr;
         p += needle.size())
      ++count;
  } else if (!streams_ && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[1]->type == REDIS_REPLY_INTEGER) {
    count = static_cast<int>(r->element[1]->integer);
  } else if (!streams_ && r->type == REDIS_REPLY_ERROR) {
    broken_message_ = format("PUBSUB NUMSUB %s: %s", name_.c_str(), r->str);
  }
  return count;
}

void Writer::counters(psb::sdk::CounterSink put) const {
  if (!streams_) return;  // pub/sub: none
  put("xadd_acknowledged", acknowledged_);
  put("xadd_resent", resent_);
  put("xadd_unsent", pending_);
  put("xadd_refused", refused_);
  put("reconnects", reconnects_);
}

}  // namespace psbredis
