// A publisher: its own connection, on which write() sends PUBLISH <channel> <message>
// as RESP bytes it builds itself and does not wait for the reply.
#ifndef PSBENCH_REDIS_WRITER_H
#define PSBENCH_REDIS_WRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "connection.h"
#include "hiredis_c.h"

namespace psbredis {

class Writer final {
 public:
  Writer(Context &ctx, const char *topic);
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;
  ~Writer();

  // Timed path: no allocation, no lock, no formatting unless it fails.
  void write(const void *data, size_t len);
  // PUBSUB NUMSUB <channel>: the subscriber connections of the channel; -1 on error
  // (the error then fails the next write).
  int matched();
  // ABI drain: every PUBLISH sent is answered, so redis-server has handed each message
  // to the subscribers' connections. true; psb::sdk::Timeout on timeout, Error on a
  // broken connection or a refused PUBLISH. (No flush(): every write is on the socket
  // when write() returns.)
  bool drain(int64_t timeout_ns);

 private:
  // Reads the PUBLISH replies that have arrived, without blocking: throws
  // psb::sdk::Error if the connection ended or the server refused a PUBLISH.
  void read_replies();
  // Reads until every PUBLISH sent has its reply: throws psb::sdk::Timeout when
  // timeout_ns passed first, Error when the connection ended or the server refused a
  // PUBLISH.
  void await_replies(int64_t timeout_ns);
  // Counts the replies in p; the server's first refusal of a PUBLISH among them goes
  // into `refusal`. Throws the broken connection's message on an unexpected reply.
  void consume(const char *p, size_t n, std::string &refusal);
  // Marks the connection broken with that message and throws it.
  [[noreturn, gnu::cold]] void break_with(std::string message);
  [[noreturn, gnu::cold]] void fail_broken() const;  // throws the broken connection's message

  Settings settings_;
  Link c_;
  int fd_ = -1;
  std::string channel_;
  Command publish_;       // PUBLISH <channel> <message>
  uint64_t pending_ = 0;  // PUBLISH sent whose reply is not read yet
  ReplyLines lines_;      // the replies read so far
  char rbuf_[4096] = {};
  bool broken_ = false;
  std::string broken_message_;  // why, without the driver's name
};

}  // namespace psbredis

#endif
