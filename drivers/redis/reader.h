// A reader: its own connection, whose replies hiredis's reader parses (in a buffer sized
// once for the largest batch, so it never grows on the timed path); what is handed out
// stays in hiredis's reply object until release() or the next take().
//
// best_effort, pub/sub: SUBSCRIBEd (and the subscription confirmed by the server) before
// create() returns; a lost connection is an error (the subscription went with it).
//
// reliable, streams (durability volatile or persistent): XREAD COUNT <n> BLOCK 0 STREAMS
// <key> <last id> on a connection named psbench-reader:<run id>:<topic> (for the writer's
// matched_readers), from the stream's last id when it was created, so it gets every entry
// added after it joined. The next XREAD is sent as soon as a batch arrives. When the
// server goes away it reconnects (one attempt at most every kRetryNs, in take() or the
// listener thread: hiredis does not reconnect) and reads on from the last id it got, so
// what was added while it was away comes too. take() never fails for an absent server.
#ifndef PSBENCH_REDIS_READER_H
#define PSBENCH_REDIS_READER_H

#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "psbench/sdk.hpp"

namespace psbredis {

class Reader final : Endpoint {
 public:
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener);
  ~Reader();

  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();
  // Streams: reconnects (connections made again after the server went away); pub/sub:
  // none. No matched(): Redis cannot tell who publishes on a channel.
  void counters(psb::sdk::CounterSink put) const;

 private:
  void subscribe();    // pub/sub: connect, SUBSCRIBE, its confirmation
  void join_stream();  // streams: the stream's last id, then the first connection
  // The next message: from the batch held, else from the socket (reconnecting when there
  // is no connection). true = one in data/len; false = none within timeout_ns (0: do not
  // block; negative: no limit), a signal or a stop request. Throws psb::sdk::Error on an
  // error (streams: only for what a restart does not explain: a refused XREAD, a
  // malformed reply).
  bool next(int64_t timeout_ns, const void *&data, size_t &len);
  // Streams: one connection attempt if none was made in the last kRetryNs: connect,
  // CLIENT SETNAME, room in hiredis's buffer, XREAD sent. true = connected.
  bool reconnect();
  bool send_xread();     // false: the connection was dropped
  bool read_some();      // true = bytes fed to hiredis; false = none (or dropped)
  void accept(Reply r);  // a reply: pub/sub's message, or XREAD's batch, nil or error
  void make_room();
  void listen();
  void tear_down();
  // Messages in batch_: pub/sub's one, or the XREAD reply's entries.
  size_t batch_size() const { return streams_ ? batch_->element[0]->element[1]->elements : 1; }

  std::vector<char> rbuf_;   // socket -> here -> hiredis's reader buffer
  bool read_first_ = false;  // the last read filled rbuf_: more is probably waiting
  Reply batch_;              // pub/sub's message, or the XREAD reply being handed out
  size_t index_ = 0;         // its next entry
  // Streams.
  size_t count_ = 1;  // entries per XREAD: about 4 MiB of messages at most
  std::optional<Command> xread_;
  char last_id_[48] = "0-0";
  size_t last_id_len_ = 3;
  psb::sdk::Listener on_data_;
  std::optional<psb::sdk::StopFd> stop_;  // listener mode: ends the listener's wait
  psb::sdk::ListenerThread listener_;
};

}  // namespace psbredis

#endif
