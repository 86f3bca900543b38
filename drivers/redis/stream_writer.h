// A writer for reliability reliable (durability volatile or persistent): XADD <key> MAXLEN ~
// <bound> * d <message> on its own connection, as RESP bytes it builds itself, without waiting for
// the reply (the entry's id). When the server goes away it reconnects, one attempt at most every
// kRetryNs, in write() itself (hiredis does not reconnect): a write while it is unreachable fails.
#ifndef PSBENCH_REDIS_STREAM_WRITER_H
#define PSBENCH_REDIS_STREAM_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "context.h"
#include "hiredis_c.h"
#include "psbench/sdk.hpp"

namespace psbredis {

// XADDs sent and not answered yet, at most: a write past it waits for replies, up to
// kWindowWaitNs, and fails if they do not come. It bounds what a crash of the server can
// take of what write() accepted (README.md, "Durability persistent: Redis Streams").
constexpr uint64_t kWindow = 128;
constexpr int64_t kWindowWaitNs = 1'000'000'000;

class StreamWriter final : public Endpoint {
 public:
  StreamWriter(Context &ctx, const char *topic);
  ~StreamWriter() override;

  // Timed path: no allocation, no lock, no formatting unless it fails (or reconnects).
  void write(const void *data, size_t len);
  // The connections named as this topic's stream readers (CLIENT LIST); -1 while the
  // server is unreachable.
  int matched();
  // Every XADD sent is answered (so it is in the stream, and with appendfsync always in
  // the append-only file). Throws Timeout when not within timeout_ns, Error when the
  // connection ended with XADDs unanswered or the server refused one.
  bool drain(int64_t timeout_ns);
  // xadd_acknowledged, xadd_unacknowledged (sent, the connection ended before the
  // reply: lost unless the server had written them), xadd_refused, reconnects.
  void counters(psb::sdk::CounterSink put) const;

  const std::string &key() const { return key_; }
  bool connected() const { return c_ != nullptr; }

 private:
  // One connection attempt if none was made in the last kRetryNs: connect, then EXISTS
  // on the key (refused while the server loads its data). true = connected.
  bool reconnect();
  // Closes the connection: its unanswered XADDs are counted as unacknowledged.
  void drop(std::string why);
  // Reads the replies that have arrived without blocking; drops the connection if it
  // ended. A refusal is kept in refusal_.
  void read_replies();
  void consume(const char *p, size_t n);
  // Waits until fewer than kWindow XADDs are unanswered; throws after kWindowWaitNs or
  // when the connection ended.
  void await_window();
  [[noreturn, gnu::cold]] void fail_down(const char *what) const;

  Settings settings_;
  redisContext *c_ = nullptr;
  int fd_ = -1;
  std::string key_, reader_name_;
  // "*8\r\n$4\r\nXADD\r\n$<n>\r\n<key>\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$<n>\r\n<bound>\r\n
  //  $1\r\n*\r\n$1\r\nd\r\n$" then room for the length and CRLF.
  std::vector<char> header_;
  size_t prefix_len_ = 0;
  uint64_t pending_ = 0;  // XADD sent on this connection whose reply is not read yet
  uint64_t acknowledged_ = 0, unacknowledged_ = 0, refused_ = 0, reconnects_ = 0;
  int64_t next_attempt_ns_ = 0;
  std::string down_why_;  // why the server is unreachable (set by drop and reconnect)
  std::string refusal_;   // the server's first refusal not reported yet
  char line_[256] = {};   // the reply line being read
  size_t line_len_ = 0;
  bool bulk_next_ = false;  // the next line is a bulk string's content (the entry's id)
  char rbuf_[4096] = {};
};

}  // namespace psbredis

#endif
