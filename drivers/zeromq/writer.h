// A writer: one XPUB socket bound to the topic's endpoint. XPUB is PUB (same
// distribution, same drop at the high-water mark) that also hands the subscriptions it
// receives to the application, which is how matched_readers() counts subscribers whose
// subscription has reached this socket.
#pragma once
#include <zmq.h>

#include <cstdint>
#include <memory>
#include <string>

#include "zmq_context.h"

namespace psbzmq {

class Writer {
 public:
  // Throws psb::sdk::Error if refused.
  Writer(Context &ctx, const char *topic);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  int matched();  // subscribers whose subscription has reached this socket
  void write(const void *data, size_t len);
  void *loan(size_t len);
  void write_loan(void *sample, size_t len);

 private:
  void bind();
  void tear_down();
  [[noreturn, gnu::cold]] void send_failed(int error);

  Context *ctx_;
  void *socket_ = nullptr;
  std::string topic_, endpoint_, ipc_file_;
  // The subscription each of this topic's readers sends (see Reader): its topic name,
  // or "" when readers conflate and subscribe to everything only.
  std::string count_key_;
  int matched_ = 0;
  zmq_msg_t loan_;
  bool loan_held_ = false;
  std::shared_ptr<InprocTopic> inproc_;
  int64_t created_ns_ = 0;
  bool bound_ = false, hinted_ = false;
};

}  // namespace psbzmq
