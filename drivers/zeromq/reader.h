// A reader: one SUB socket connected to the topic's endpoint. It subscribes to every
// message (""), then to its topic name as a marker the writer's XPUB counts (see
// Writer::matched_readers); with history keep_last:1 (ZMQ_CONFLATE) to "" only.
#pragma once
#include <zmq.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "psbench/sdk.hpp"
#include "zmq_context.h"

namespace psbzmq {

class Reader {
 public:
  // A listener given: listener mode (a thread of the driver's calls it). Throws
  // psb::sdk::Error if refused.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data);
  ~Reader();
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  int matched();  // the writer connected: 1 or 0
  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();

 private:
  void setup();
  void start_monitor();
  void set_receive_timeout_ms(int ms);
  bool inproc_writer_never_came() const;
  void listen();
  void tear_down();

  Context *ctx_;
  void *socket_ = nullptr;
  void *monitor_ = nullptr;  // PAIR receiving the SUB's socket events (tcp, ipc)
  bool monitoring_ = false;
  std::string topic_, endpoint_;
  zmq_msg_t msg_;  // the sample take() handed out, alive until release() or the next take()
  int receive_timeout_ms_ = -2;  // ZMQ_RCVTIMEO now in force; -2 = not set yet
  int connected_ = 0;            // tcp, ipc: 1 after a ZMTP handshake with the writer
  std::shared_ptr<InprocTopic> inproc_;
  bool inproc_writer_seen_ = false, hinted_ = false;
  int64_t created_ns_ = 0;
  psb::sdk::Listener on_data_;  // listener mode
  std::thread listener_;
  std::atomic<bool> stop_{false};
};

}  // namespace psbzmq
