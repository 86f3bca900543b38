// A reader for reliability reliable (durability volatile or persistent): XREAD COUNT <n> BLOCK 0
// STREAMS <key> <last id> on its own connection (named psbench-reader:<run id>:<topic> for the
// writer's matched_readers), from the stream's last id when it was created, so it gets every entry
// added after it joined. The next XREAD is sent as soon as a batch arrives. When the
// server goes away it reconnects (one attempt at most every kRetryNs, in take() or the
// listener thread: hiredis does not reconnect) and reads on from the last id it got, so
// what was added while it was away comes too. take() never fails for an absent server.
#ifndef PSBENCH_REDIS_STREAM_READER_H
#define PSBENCH_REDIS_STREAM_READER_H

#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "hiredis_c.h"
#include "psbench/sdk.hpp"

namespace psbredis {

class StreamReader final {
 public:
  StreamReader(Context &ctx, const char *topic, psb::sdk::Listener listener);
  ~StreamReader();

  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();
  // reconnects: connections made again after the server went away.
  void counters(psb::sdk::CounterSink put) const;

  const std::string &key() const { return key_; }
  std::string last_id() const { return std::string(last_id_, last_id_len_); }

 private:
  // The next entry: from the batch held, else from the socket (reconnecting when there
  // is no connection). true = one in data/len; false = none within timeout_ns (0: do not
  // block; negative: no limit), a signal or a stop request. Throws only for what a
  // restart does not explain (a refused XREAD, a malformed reply).
  bool next(int64_t timeout_ns, const void *&data, size_t &len);
  // One connection attempt if none was made in the last kRetryNs: connect, CLIENT
  // SETNAME, room in hiredis's buffer, XREAD sent. true = connected.
  bool reconnect();
  void drop(std::string why);
  bool send_xread();           // false: the connection was dropped
  bool read_some();            // true = bytes fed to hiredis; false = none (or dropped)
  void accept(redisReply *r);  // an XREAD reply: a batch, nil, or an error
  void make_room();
  void free_batch();
  void listen();
  void tear_down();

  Settings settings_;
  redisContext *c_ = nullptr;
  int fd_ = -1;
  std::string key_, name_;
  size_t count_ = 1;         // entries per XREAD: about 4 MiB of messages at most
  std::vector<char> xread_;  // XREAD's RESP up to the id, then room for it
  size_t xread_prefix_ = 0;
  char last_id_[48] = "0-0";
  size_t last_id_len_ = 3;
  redisReply *batch_ = nullptr;  // the XREAD reply being handed out
  size_t index_ = 0;             // its next entry
  std::vector<char> rbuf_;
  bool read_first_ = false;
  uint64_t reconnects_ = 0;
  psb::sdk::RetryPacer pacer_{kRetryNs};
  std::string down_why_;
  psb::sdk::Listener on_data_;
  std::optional<psb::sdk::StopFd> stop_;  // listener mode: ends the listener's wait
  psb::sdk::ListenerThread listener_;
};

}  // namespace psbredis

#endif
