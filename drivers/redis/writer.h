// A writer: its own connection, on which write() sends the message as RESP bytes it builds
// itself (Command) and does not wait for the reply; the replies are read later, without
// blocking, by the next write(), drain() or matched().
//
// best_effort, pub/sub: PUBLISH <channel> <message>. A broken connection fails this
// write and every call after it.
//
// reliable, streams (durability volatile or persistent): XADD <key> MAXLEN ~ <bound> * d
// <message>. A copy of every message not answered yet stays in a ring of window() slots:
// when the server goes away, write() goes on queueing into it, reconnects (one attempt at
// most every kRetryNs: hiredis does not reconnect) and sends again everything not answered,
// oldest first. A write that finds the ring full fails (after waiting up to kWindowWaitNs
// while connected).
#ifndef PSBENCH_REDIS_WRITER_H
#define PSBENCH_REDIS_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbredis {

// Streams' ring: at most kWindow messages, and at most about kRingBytes of them (at least one).
constexpr uint64_t kWindow = 128;
constexpr uint64_t kRingBytes = 16u << 20;
constexpr int64_t kWindowWaitNs = 1'000'000'000;

class Writer final : Endpoint {
 public:
  Writer(Context &ctx, const char *topic);
  ~Writer();

  // Timed path: no allocation, no lock, no formatting unless it fails (or reconnects);
  // streams: a copy into the ring.
  void write(const void *data, size_t len);
  // Pub/sub: PUBSUB NUMSUB <channel>, the subscriber connections of the channel; -1 on
  // error (the error then fails the next write). Streams: the connections named as this
  // topic's stream readers (CLIENT LIST); -1 while the server is unreachable.
  int matched();
  // ABI drain: every PUBLISH (XADD) sent is answered, so redis-server has handed each
  // message to the subscribers' connections (the entry is in the stream, and with
  // appendfsync always in the append-only file); streams reconnect meanwhile if need be.
  // true; psb::sdk::Timeout on timeout, Error on a broken pub/sub connection or a refused
  // command. (No flush(): every write is on the socket, or in the ring, when write() returns.)
  bool drain(int64_t timeout_ns);
  // Streams: xadd_acknowledged, xadd_resent (sent again after a reconnect: a duplicate when
  // the server had kept the first one), xadd_refused, reconnects, and xadd_unsent (in the
  // ring, unanswered, when it is asked: at the end, lost). Pub/sub: none.
  void counters(psb::sdk::CounterSink put) const;

 private:
  // Streams: one connection attempt if none was made in the last kRetryNs: connect, EXISTS
  // on the key (refused while the server loads its data), then the ring sent again. true =
  // connected.
  bool reconnect();
  // Sends a message (streams: the ring's message i, 0 = the oldest unanswered). false: dropped.
  bool send(const void *data, size_t len);
  bool send_slot(uint64_t i);
  // Reads the replies that have arrived without blocking: a pub/sub connection that ended
  // throws, a stream's is dropped. A refusal is kept in refusal_.
  void read_replies();
  void consume(const char *p, size_t n);
  void answered();  // the oldest unanswered message got its reply
  void throw_refusal(const char *then);
  // Streams: waits while the ring is full and connected, up to kWindowWaitNs; throws then.
  void await_window();

  Command command_;         // PUBLISH <channel>, or XADD <key> MAXLEN ~ <bound> * d
  std::vector<char> ring_;  // streams: slots_ slots of slot_size_ bytes
  std::vector<size_t> lens_;
  uint64_t slots_ = 1, slot_size_ = kMaxPayload;
  uint64_t head_ = 0;     // the oldest unanswered message's slot
  uint64_t pending_ = 0;  // messages unanswered (streams: in the ring, sent or not)
  uint64_t sent_ = 0;     // of them, sent on this connection
  uint64_t acknowledged_ = 0, resent_ = 0, refused_ = 0;
  std::string refusal_;     // the server's first refusal not reported yet
  ReplyLines lines_;        // the replies read so far
  bool bulk_next_ = false;  // the next line is a bulk string's content (the entry's id)
  char rbuf_[4096] = {};
};

}  // namespace psbredis

#endif
