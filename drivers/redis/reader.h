// A subscriber: its own connection, SUBSCRIBEd (and the subscription confirmed by the
// server) before create() returns. Messages are parsed by hiredis's reader; the
// payload handed out is the string inside hiredis's reply object, which the reader
// keeps until release() or the next take().
#ifndef PSBENCH_REDIS_READER_H
#define PSBENCH_REDIS_READER_H

#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "hiredis_c.h"
#include "psbench/sdk.hpp"

namespace psbredis {

class Reader final {
 public:
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener);
  ~Reader();

  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();
  // No matched(): Redis cannot tell who publishes on a channel.

  const std::string &channel() const { return channel_; }

 private:
  // The next pub/sub message: from what hiredis already holds, else from the socket.
  // true = *out holds one, false = none within timeout_ns (0: do not block; negative:
  // no limit) or a signal or a stop request; throws psb::sdk::Error on an error.
  bool next(int64_t timeout_ns, redisReply **out);
  // Reads what the socket has (without blocking) into hiredis's reader. true = got
  // bytes, false = nothing there; throws on an error.
  bool read_some();
  void listen();
  void tear_down();

  Settings settings_;
  redisContext *c_ = nullptr;
  int fd_ = -1;
  std::string channel_;
  std::vector<char> rbuf_;   // socket -> here -> hiredis's reader buffer
  bool read_first_ = false;  // the last read filled rbuf_: more is probably waiting
  redisReply *held_ = nullptr;
  psb::sdk::Listener on_data_;
  std::optional<psb::sdk::StopFd> stop_;  // listener mode: ends the listener's wait
  psb::sdk::ListenerThread listener_;
};

}  // namespace psbredis

#endif
