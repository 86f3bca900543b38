// A writer for reliability reliable (durability volatile or persistent): XADD <key>
// MAXLEN ~ <bound> * d <message> on its own connection, as RESP bytes it builds itself,
// without waiting for the reply (the entry's id). A copy of every message not answered
// yet stays in a ring of window() slots: when the server goes away, write() goes on
// queueing into it, reconnects (one attempt at most every kRetryNs: hiredis does not
// reconnect) and sends again everything not answered, oldest first. A write that finds
// the ring full fails (after waiting up to kWindowWaitNs while connected).
#ifndef PSBENCH_REDIS_STREAM_WRITER_H
#define PSBENCH_REDIS_STREAM_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "connection.h"
#include "hiredis_c.h"
#include "psbench/sdk.hpp"

namespace psbredis {

// The ring: at most kWindow messages, and at most about kRingBytes of them (at least one).
constexpr uint64_t kWindow = 128;
constexpr uint64_t kRingBytes = 16u << 20;
constexpr int64_t kWindowWaitNs = 1'000'000'000;

class StreamWriter final {
 public:
  StreamWriter(Context &ctx, const char *topic);
  StreamWriter(const StreamWriter &) = delete;
  StreamWriter &operator=(const StreamWriter &) = delete;
  ~StreamWriter();

  // Timed path: a copy into the ring, no allocation, no lock, no formatting unless it
  // fails (or reconnects).
  void write(const void *data, size_t len);
  // The connections named as this topic's stream readers (CLIENT LIST); -1 while the
  // server is unreachable.
  int matched();
  // Every XADD answered (so it is in the stream, and with appendfsync always in the
  // append-only file), reconnecting meanwhile if need be. Throws Timeout when not within
  // timeout_ns, Error when the server refused one.
  bool drain(int64_t timeout_ns);
  // xadd_acknowledged, xadd_resent (sent again after a reconnect: a duplicate when the
  // server had kept the first one), xadd_refused, reconnects, and xadd_unsent (in the
  // ring, unanswered, when it is asked: at the end, lost).
  void counters(psb::sdk::CounterSink put) const;

 private:
  // One connection attempt if none was made in the last kRetryNs: connect, EXISTS on the
  // key (refused while the server loads its data), then the ring sent again. true =
  // connected.
  bool reconnect();
  void drop(std::string why);
  // Sends the ring's message i (0 = the oldest unanswered). false: dropped.
  bool send_slot(uint64_t i);
  // Reads the replies that have arrived without blocking; drops the connection if it
  // ended. A refusal is kept in refusal_.
  void read_replies();
  void consume(const char *p, size_t n);
  void answered();  // the oldest unanswered message got its reply
  // Waits while the ring is full and connected, up to kWindowWaitNs; throws then.
  void await_window();

  Settings settings_;
  Link c_;
  int fd_ = -1;
  std::string key_, reader_name_;
  Command xadd_;            // XADD <key> MAXLEN ~ <bound> * d <message>
  std::vector<char> ring_;  // slots_ slots of slot_size_ bytes
  std::vector<size_t> lens_;
  uint64_t slots_ = 1, slot_size_ = 0;
  uint64_t head_ = 0;     // the oldest unanswered message's slot
  uint64_t pending_ = 0;  // messages in the ring: unanswered (sent or not)
  uint64_t sent_ = 0;     // of them, sent on this connection
  uint64_t acknowledged_ = 0, resent_ = 0, refused_ = 0, reconnects_ = 0;
  psb::sdk::RetryPacer pacer_{kRetryNs};
  std::string down_why_;    // why the server is unreachable (set by drop and reconnect)
  std::string refusal_;     // the server's first refusal not reported yet
  ReplyLines lines_;        // the replies read so far
  bool bulk_next_ = false;  // the next line is a bulk string's content (the entry's id)
  char rbuf_[4096] = {};
};

}  // namespace psbredis

#endif
