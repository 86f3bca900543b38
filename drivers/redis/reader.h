// A subscriber: its own connection, SUBSCRIBEd (and the subscription confirmed by the
// server) before create() returns. Messages are parsed by hiredis's reader; the
// payload handed out is the string inside hiredis's reply object, which the reader
// keeps until release() or the next take().
#ifndef PSBENCH_REDIS_READER_H
#define PSBENCH_REDIS_READER_H

#include "hiredis_c.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "psbench/driver.h"

namespace psbredis {

class Reader final : public Endpoint {
 public:
  static Reader *create(Context *ctx, const char *topic, psb_on_data on_data, void *user,
                        psb_error *err);
  ~Reader() override;

  int take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err);
  void release();

  const std::string &channel() const { return channel_; }

 private:
  Reader() = default;
  // The next pub/sub message: from what hiredis already holds, else from the socket.
  // 1 = *out holds one, 0 = none within timeout_ns (0: do not block; negative: no
  // limit) or a signal or a stop request, -1 = error.
  int next(int64_t timeout_ns, redisReply **out, psb_error *err);
  // Reads what the socket has (without blocking) into hiredis's reader. 1 = got
  // bytes, 0 = nothing there, -1 = error.
  int read_some(psb_error *err);
  void listen();

  Settings settings_;
  redisContext *c_ = nullptr;
  int fd_ = -1;
  std::string channel_;
  std::vector<char> rbuf_;  // socket -> here -> hiredis's reader buffer
  bool read_first_ = false;  // the last read filled rbuf_: more is probably waiting
  redisReply *held_ = nullptr;
  psb_on_data on_data_ = nullptr;
  void *user_ = nullptr;
  int stop_fd_ = -1;  // eventfd that ends the listener's wait
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace psbredis

#endif
