#include "stream_writer.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "connection.h"

namespace psbredis {
StreamWriter::StreamWriter(Context &ctx, const char *topic)
    : settings_(ctx.settings),
      c_(connect_server(settings_, "stream writer")),
      fd_(c_->fd),
      key_(settings_.stream(topic)),
      reader_name_(settings_.reader_name(topic)),
      xadd_{"XADD", key_, "MAXLEN", "~", std::to_string(settings_.stream_bound()), "*", "d"} {
  slot_size_ = settings_.max_payload > 0 ? settings_.max_payload : kMaxPayload;
  slots_ = kRingBytes / slot_size_;
  slots_ = slots_ < 1 ? 1 : slots_ > kWindow ? kWindow : slots_;
  ring_.assign(slots_ * slot_size_, '\0');  // touched now: no page fault while writing
  lens_.assign(slots_, 0);
}

StreamWriter::~StreamWriter() {
  if (c_ != nullptr) {
    try {
      drain(2'000'000'000);  // a close with unread replies would send a reset
    } catch (const std::exception &) {
    }
  }
}

void StreamWriter::drop(std::string why) {
  c_.reset();
  fd_ = -1;
  sent_ = 0;  // what was sent and not answered stays in the ring, to be sent again
  lines_.clear();
  bulk_next_ = false;
  down_why_ = std::move(why);
  pacer_.lost();  // the first attempt may follow at once
}

bool StreamWriter::send_slot(uint64_t i) {
  const uint64_t slot = (head_ + i) % slots_;
  const size_t len = lens_[slot];
  const int e = xadd_.send(fd_, ring_.data() + slot * slot_size_, len);
  if (e != 0) {
    // Part of the command may be out: the connection cannot be resumed.
    drop(e == EAGAIN ? format("it did not take the message within %d s", kIoTimeoutS)
                     : std::string(std::strerror(e)));
    return false;
  }
  ++sent_;
  return true;
}

bool StreamWriter::reconnect() {
  if (!pacer_.due()) return false;
  pacer_.attempted();
  // A server that has just started answers LOADING to EXISTS until it has read its data.
  Link c =
      try_connect(settings_, "stream writer", kReconnectTimeoutMs, &down_why_, {"EXISTS", key_});
  if (c == nullptr) return false;
  c_ = std::move(c);
  fd_ = c_->fd;
  ++reconnects_;
  // Everything unanswered, oldest first: the server may have kept some of it (then the
  // reader gets it twice), the rest it never had.
  while (c_ != nullptr && sent_ < pending_) {
    if (!send_slot(sent_)) return false;
    ++resent_;
  }
  return true;
}

void StreamWriter::consume(const char *p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!lines_.feed(p[i])) continue;
    const char *line = lines_.line();
    const size_t len = lines_.size();
    if (bulk_next_) {  // the new entry's id
      bulk_next_ = false;
      answered();
      ++acknowledged_;
      continue;
    }
    if (sent_ > 0 && len >= 2 && line[0] == '$') {
      bulk_next_ = line[1] != '-';  // "$-1": a nil reply, no content line
      if (!bulk_next_) answered();
      continue;
    }
    if (sent_ > 0 && len >= 1 && line[0] == '-') {
      answered();
      ++refused_;
      if (refusal_.empty())
        refusal_ = format("redis-server refused an XADD to %s: %s", key_.c_str(), line + 1);
      continue;
    }
    drop(format("unexpected reply '%s' (%llu XADD replies awaited)", line,
                static_cast<unsigned long long>(sent_)));
    return;
  }
}

void StreamWriter::answered() {
  head_ = (head_ + 1) % slots_;
  --pending_;
  --sent_;
}

void StreamWriter::read_replies() {
  while (c_ != nullptr) {
    const ssize_t n = recv(fd_, rbuf_, sizeof rbuf_, MSG_DONTWAIT);
    if (n > 0) {
      consume(rbuf_, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    drop(n == 0 ? std::string("it closed the connection (stopped or killed?)")
                : std::string(std::strerror(errno)));
  }
}

void StreamWriter::write(const void *data, size_t len) {
  if (len > slot_size_)
    psb::sdk::fail("a %zu-byte message is over the run's largest of %llu bytes", len,
                   static_cast<unsigned long long>(slot_size_));
  // The replies of earlier XADDs: a closed connection or a refusal shows here.
  read_replies();
  if (!refusal_.empty()) {
    const std::string m = refusal_ + "; this write was not sent";
    refusal_.clear();
    throw psb::sdk::Error(m);
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

void StreamWriter::await_window() {
  const int64_t end = now_ns() + kWindowWaitNs;
  while (c_ != nullptr && pending_ >= slots_) {
    const int64_t left = end - now_ns();
    if (left <= 0)
      psb::sdk::fail(
          "redis-server at %s did not answer %llu XADD to %s within %lld ms (the writer "
          "keeps at most %llu unanswered); this write was not sent",
          settings_.address().c_str(), static_cast<unsigned long long>(pending_), key_.c_str(),
          static_cast<long long>(kWindowWaitNs / 1000000), static_cast<unsigned long long>(slots_));
    if (wait_readable(fd_, -1, left) < 0)
      psb::sdk::fail("waiting for XADD replies: %s", std::strerror(errno));
    read_replies();
  }
  if (pending_ >= slots_)
    psb::sdk::fail(
        "XADD to %s: redis-server at %s is unreachable (%s) and the writer's %llu unanswered "
        "messages wait for it; this write was not accepted (it reconnects at most every %lld "
        "ms)",
        key_.c_str(), settings_.address().c_str(), down_why_.c_str(),
        static_cast<unsigned long long>(pending_), static_cast<long long>(kRetryNs / 1000000));
}

bool StreamWriter::drain(int64_t timeout_ns) {
  const int64_t end = now_ns() + timeout_ns;
  for (;;) {
    read_replies();
    if (!refusal_.empty()) {
      const std::string m = refusal_;
      refusal_.clear();
      throw psb::sdk::Error(m);
    }
    if (pending_ == 0) return true;
    const int64_t left = end - now_ns();
    if (left <= 0)
      throw psb::sdk::Timeout(
          format("%llu XADD to %s not answered within %lld ms (redis-server at %s: %s)",
                 static_cast<unsigned long long>(pending_), key_.c_str(),
                 static_cast<long long>(timeout_ns / 1000000), settings_.address().c_str(),
                 c_ != nullptr ? "connected" : down_why_.c_str()));
    if (c_ == nullptr) {
      if (!reconnect()) {
        const int64_t next = pacer_.next_ns() - now_ns();
        timespec ts{0, static_cast<long>(next < left ? (next > 0 ? next : 0) : left)};
        nanosleep(&ts, nullptr);
      }
      continue;
    }
    if (wait_readable(fd_, -1, left) < 0)
      psb::sdk::fail("waiting for XADD replies: %s", std::strerror(errno));
  }
}

int StreamWriter::matched() {
  if (c_ == nullptr && !reconnect()) return -1;
  try {
    drain(int64_t(kIoTimeoutS) * 1000000000);  // replies come in order: the XADDs' first
  } catch (const std::exception &) {
    return -1;
  }
  if (c_ == nullptr) return -1;
  Reply r;
  try {
    r = command(c_.get(), settings_, "stream writer", {"CLIENT", "LIST"});
  } catch (const std::exception &e) {
    drop(e.what());
    return -1;
  }
  int count = -1;
  if (r->type == REDIS_REPLY_STRING) {
    // One line per connection: "id=5 addr=... name=<name> age=...".
    const std::string needle = " name=" + reader_name_ + " ";
    count = 0;
    for (const char *p = r->str; (p = std::strstr(p, needle.c_str())) != nullptr;
         p += needle.size())
      ++count;
  }
  return count;
}

void StreamWriter::counters(psb::sdk::CounterSink put) const {
  put("xadd_acknowledged", acknowledged_);
  put("xadd_resent", resent_);
  put("xadd_unsent", pending_);
  put("xadd_refused", refused_);
  put("reconnects", reconnects_);
}

}  // namespace psbredis
