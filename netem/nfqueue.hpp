// One bound NFQUEUE: packets come in as ids (metadata only, no payload is copied) and
// leave by a verdict on their id. Everything is set up in the constructor; reading and
// verdicts use fixed buffers and do not allocate.
#pragma once

#include <cstdint>

struct nfq_handle;
struct nfq_q_handle;
struct nfgenmsg;
struct nfq_data;

namespace netdelay {

// Told of each packet read from the queue.
class PacketSink {
 public:
  virtual void on_packet(uint32_t id) = 0;

 protected:
  ~PacketSink() = default;
};

class NfQueue {
 public:
  // Binds queue `number`, with room in the kernel for `kernel_maxlen` packets awaiting a
  // verdict. Throws std::runtime_error saying what failed.
  NfQueue(uint16_t number, uint32_t kernel_maxlen, PacketSink& sink);
  ~NfQueue();
  NfQueue(const NfQueue&) = delete;
  NfQueue& operator=(const NfQueue&) = delete;

  int fd() const { return fd_; }

  // Reads one batch of queued packets without blocking, telling the sink of each.
  // Returns false when nothing was pending. A receive-buffer overrun (the kernel dropped
  // packets it could not hand us) is counted, not fatal; other errors throw.
  bool read_batch();
  void accept(uint32_t id);
  void drop(uint32_t id);
  uint64_t overruns() const { return overruns_; }

 private:
  static int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* self);

  nfq_handle* handle_ = nullptr;
  nfq_q_handle* queue_ = nullptr;
  PacketSink& sink_;
  int fd_ = -1;
  uint64_t overruns_ = 0;
  // Metadata messages are a few hundred bytes; one receive takes many of them.
  alignas(8) char buffer_[1 << 16];
};

}  // namespace netdelay
