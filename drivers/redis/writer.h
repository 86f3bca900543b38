// A publisher: its own connection, on which write() sends PUBLISH <channel> <message>
// as RESP bytes it builds itself and does not wait for the reply.
#ifndef PSBENCH_REDIS_WRITER_H
#define PSBENCH_REDIS_WRITER_H

#include "hiredis_c.h"

#include <cstdint>
#include <string>
#include <vector>

#include "context.h"
#include "psbench/driver.h"

namespace psbredis {

class Writer final : public Endpoint {
 public:
  static Writer *create(Context *ctx, const char *topic, psb_error *err);
  ~Writer() override;

  // Timed path: no allocation, no lock, no formatting unless it fails.
  int write(const void *data, size_t len, psb_error *err);
  // PUBSUB NUMSUB <channel>: the subscriber connections of the channel; -1 on error
  // (the error then fails the next write).
  int matched_readers();
  // ABI drain: every PUBLISH sent is answered, so redis-server has handed each message
  // to the subscribers' connections. 1, 0 on timeout, -1 (err set) on a broken
  // connection or a refused PUBLISH.
  int drain(int64_t timeout_ns, psb_error *err);

  const std::string &channel() const { return channel_; }
  uint64_t pending_replies() const { return pending_; }
  long long last_receivers() const { return last_receivers_; }

 private:
  Writer() = default;
  // Reads the PUBLISH replies that have arrived, without blocking: false (err set) if
  // the connection ended or the server refused a PUBLISH.
  bool read_replies(psb_error *err);
  // Reads until every PUBLISH sent has its reply: 1, 0 when timeout_ns passed first,
  // -1 (err set) when the connection ended or the server refused a PUBLISH.
  int await_replies(int64_t timeout_ns, psb_error *err);
  bool consume(const char *p, size_t n, psb_error *err);
  int fail(psb_error *err);  // copies the broken connection's message; returns -1

  Settings settings_;
  redisContext *c_ = nullptr;
  int fd_ = -1;
  std::string channel_;
  // "*3\r\n$7\r\nPUBLISH\r\n$<n>\r\n<channel>\r\n$" then room for the length and CRLF.
  std::vector<char> header_;
  size_t prefix_len_ = 0;
  uint64_t pending_ = 0;  // PUBLISH sent whose reply is not read yet
  long long last_receivers_ = -1;
  char line_[256] = {};  // the reply line being read
  size_t line_len_ = 0;
  char rbuf_[4096] = {};
  bool broken_ = false;
  psb_error broken_err_{};
};

}  // namespace psbredis

#endif
