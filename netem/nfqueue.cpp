#include "nfqueue.hpp"

#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace netdelay {

namespace {

// Room for bursts: with payloads not copied each message is small, and a larger buffer
// means fewer bursts overrun it (an overrun loses packets in the kernel).
constexpr unsigned kReceiveBufferBytes = 8u << 20;

std::runtime_error failure(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

NfQueue::NfQueue(uint16_t number, uint32_t kernel_maxlen, PacketSink& sink) : sink_(sink) {
  handle_ = nfq_open();
  if (handle_ == nullptr) throw failure("cannot open a netfilter queue socket (needs root)");
  queue_ = nfq_create_queue(handle_, number, &NfQueue::on_packet, this);
  if (queue_ == nullptr) {
    std::string what =
        "cannot bind NFQUEUE " + std::to_string(number) +
        (errno == EPERM ? " (needs root: CAP_NET_ADMIN)" : " (is another program bound to it?)");
    nfq_close(handle_);
    throw failure(what);
  }
  // Verdicts go by id only, so no payload needs copying to us.
  if (nfq_set_mode(queue_, NFQNL_COPY_META, 0) < 0 ||
      nfq_set_queue_maxlen(queue_, kernel_maxlen) < 0) {
    std::string what = "cannot configure NFQUEUE " + std::to_string(number);
    nfq_destroy_queue(queue_);
    nfq_close(handle_);
    throw failure(what);
  }
  nfnl_rcvbufsiz(nfq_nfnlh(handle_), kReceiveBufferBytes);
  fd_ = nfq_fd(handle_);
}

NfQueue::~NfQueue() {
  // Unbinding: from now on packets sent to this queue number are dropped by the kernel.
  nfq_destroy_queue(queue_);
  nfq_close(handle_);
}

bool NfQueue::read_batch() {
  ssize_t n = recv(fd_, buffer_, sizeof buffer_, MSG_DONTWAIT);
  if (n < 0) {
    if (errno == ENOBUFS) {
      ++overruns_;
      return true;  // the socket is usable again; more may be pending
    }
    if (errno == EAGAIN || errno == EINTR) return false;  // the poll loop comes back
    // Anything else would make poll report the socket forever: give up, loudly.
    throw failure("cannot read from the queue");
  }
  nfq_handle_packet(handle_, buffer_, static_cast<int>(n));
  return true;
}

void NfQueue::accept(uint32_t id) { nfq_set_verdict(queue_, id, NF_ACCEPT, 0, nullptr); }

void NfQueue::drop(uint32_t id) { nfq_set_verdict(queue_, id, NF_DROP, 0, nullptr); }

int NfQueue::on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* self) {
  nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(nfa);
  if (header != nullptr) static_cast<NfQueue*>(self)->sink_.on_packet(ntohl(header->packet_id));
  return 0;
}

}  // namespace netdelay
