// Bare ORTE ping-pong (ORTE 0.3.4's C API only, no psbench code). It does what psbench's
// orte driver does with its defaults (drivers/orte/orte_driver.cpp; psbench's defaults:
// best effort, --notify wait):
//   - one ORTE application per process in the domain of the manager psbench started
//     (broker 127.0.0.1:PORT -> domain 1 + PORT % 5000, as ortemanager-service), its
//     sockets on a loopback address of its own (127.P.P.1, P.P the process id's low 16
//     bits), the only one it advertises; manager key 127.0.0.2; 64 KiB socket buffers,
//     user bytes per packet 0xff00, meta bytes per packet 0xffc0; send queue 1, critical
//     level 1 (ORTE's defaults);
//   - one registered type, "psbench": the message's bytes behind a CDR unsigned long
//     length, serialized from the caller's buffer during ORTEPublicationSend, read in
//     place in ORTE's receive buffer;
//   - a publication per direction (strength 1, persistence 1 day), a best-effort
//     IMMEDIATE subscription per direction (deadline 1 day, minimum separation 0) whose
//     callback, on ORTE's user-data receive thread, copies the sample into a queue of
//     recycled buffers;
//   - the take: the oldest queued sample, waiting on the queue's condition variable for
//     the time left (pong in 50 ms slices, ping up to 1 s, as psbench-node);
//   - pong echoes each message it takes, the same bytes, on its publication.
// A message is psbench's: a 32-byte header (seq first) and the payload. Ping repeats a
// first message until pong answers, sends --warmup round trips (default 1000, as
// psbench's ping), then SECONDS of closed-loop round trips, and prints "p50_us p99_us
// count" of the measured round trips (nearest rank); a message with no payload ends pong,
// which echoes it.
//   orte_probe pong|ping 127.0.0.1:PORT TAG SIZE SECONDS
#include <orte.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "ping_pong.hpp"  // bench/probes/common

namespace {

using probe::now_ns;
constexpr probe::Loop kLoop{"orte_probe", /*usage=*/false};

constexpr const char *kType = "psbench";
constexpr unsigned kUserBytesPerPacket = 0xff00;
constexpr unsigned kMetaBytesPerPacket = 0xffc0;
constexpr int kPersistenceS = 86400;
constexpr size_t kHeader = 32;
constexpr long kWarmup = 1000;

[[noreturn]] void die(const char *what) {
  std::fprintf(stderr, "orte_probe: %s\n", what);
  std::exit(1);
}

// What is written: the caller's bytes during ORTEPublicationSend.
struct Outgoing {
  const void *data = nullptr;
  uint32_t len = 0;
};
void serialize(CDR_Codec *codec, void *instance) {
  const auto *out = static_cast<Outgoing *>(instance);
  CDR_put_ulong(codec, out->len);
  CDR_buffer_puts(codec, out->data, out->len);
}
int serialized_size(ORTEGetMaxSizeParam *param, int) {
  if (param->recv_size >= 0) return param->recv_size;
  return int(4 + static_cast<Outgoing *>(static_cast<void *>(param->data))->len);
}

// The subscription's end: what ORTE's receive thread queues, what take() hands out.
struct Sink {
  const void *data = nullptr;  // the issue in ORTE's buffer, during the callback
  uint32_t len = 0;
  bool malformed = false;
  std::mutex mu;
  std::condition_variable ready;
  std::deque<std::vector<unsigned char>> queue;
  std::vector<std::vector<unsigned char>> spare;
};

void deserialize(CDR_Codec *codec, void *instance) {
  auto *sink = static_cast<Sink *>(instance);
  CORBA_unsigned_long len = 0;
  sink->malformed = !CDR_get_ulong(codec, &len) || len > codec->buf_len - codec->rptr;
  sink->data = codec->buffer + codec->rptr;
  sink->len = sink->malformed ? 0 : uint32_t(len);
}

void on_issue(const ORTERecvInfo *info, void *instance, void *) {
  auto *sink = static_cast<Sink *>(instance);
  if (info->status != NEW_DATA || sink->malformed) return;
  std::lock_guard<std::mutex> lock(sink->mu);
  std::vector<unsigned char> buffer;
  if (!sink->spare.empty()) {
    buffer = std::move(sink->spare.back());
    sink->spare.pop_back();
  }
  const auto *bytes = static_cast<const unsigned char *>(sink->data);
  buffer.assign(bytes, bytes + sink->len);
  sink->queue.push_back(std::move(buffer));
  sink->ready.notify_one();
}

class Endpoints {
 public:
  Endpoints(int port, const std::string &tag, bool ping) {
    ORTEInit();
    const int domain = 1 + port % 5000;
    ORTEDomainProp prop;
    ORTEDomainPropDefaultGet(&prop);
    prop.listen = (127u << 24) | ((uint32_t(getpid()) & 0xffff) << 8) | 1u;
    prop.IFCount = 1;
    prop.IFProp[0].ifFlags = 0;
    prop.IFProp[0].ipAddress = prop.listen;
    static char key[] = "127.0.0.2";
    prop.keys = key;
    prop.recvBuffSize = prop.sendBuffSize = 0x10000;
    prop.wireProp.userBytesPerPacket = kUserBytesPerPacket;
    prop.wireProp.metaBytesPerPacket = kMetaBytesPerPacket;
    prop.publPropDefault.sendQueueSize = 1;
    prop.publPropDefault.criticalQueueLevel = 1;
    ORTEDomainAppEvents events;
    ORTEDomainInitEvents(&events);
    domain_ = ORTEDomainAppCreate(domain, &prop, &events, ORTE_FALSE);
    if (domain_ == nullptr) die("ORTEDomainAppCreate failed");
    if (ORTETypeRegisterAdd(domain_, kType, serialize, deserialize, serialized_size,
                            kUserBytesPerPacket) != ORTE_OK)
      die("ORTETypeRegisterAdd failed");
    const std::string out = tag + (ping ? "_ping" : "_pong");
    const std::string in = tag + (ping ? "_pong" : "_ping");
    NtpTime persistence, deadline, separation;
    NTPTIME_BUILD(persistence, kPersistenceS);
    NTPTIME_BUILD(deadline, kPersistenceS);
    NTPTIME_ZERO(separation);
    pub_ = ORTEPublicationCreate(domain_, out.c_str(), kType, &out_, &persistence, 1, nullptr,
                                 nullptr, nullptr);
    if (pub_ == nullptr) die("ORTEPublicationCreate failed");
    sub_ = ORTESubscriptionCreate(domain_, IMMEDIATE, BEST_EFFORTS, in.c_str(), kType, &sink_,
                                  &deadline, &separation, on_issue, nullptr, IPADDRESS_INVALID);
    if (sub_ == nullptr) die("ORTESubscriptionCreate failed");
  }
  ~Endpoints() { ORTEDomainAppDestroy(domain_); }

  void write(const void *data, size_t len) {
    out_ = {data, uint32_t(len)};
    if (ORTEPublicationSend(pub_) != ORTE_OK) die("ORTEPublicationSend failed");
  }

  // The oldest queued message, into `got` (the previous one goes back to the spares).
  bool take(int64_t timeout_ns, std::vector<unsigned char> &got) {
    std::unique_lock<std::mutex> lock(sink_.mu);
    if (!got.empty() || got.capacity() != 0) sink_.spare.push_back(std::move(got));
    got = {};
    if (sink_.queue.empty())
      sink_.ready.wait_for(lock, std::chrono::nanoseconds(timeout_ns),
                           [this] { return !sink_.queue.empty(); });
    if (sink_.queue.empty()) return false;
    got = std::move(sink_.queue.front());
    sink_.queue.pop_front();
    return true;
  }

 private:
  ORTEDomain *domain_ = nullptr;
  ORTEPublication *pub_ = nullptr;
  ORTESubscription *sub_ = nullptr;
  Outgoing out_;
  Sink sink_;
};

uint64_t seq_of(const std::vector<unsigned char> &m) {
  uint64_t seq = 0;
  if (m.size() >= sizeof seq) std::memcpy(&seq, m.data(), sizeof seq);
  return seq;
}

// The endpoints as the shared loop takes and writes (common/ping_pong.hpp): psbench's
// messages of SIZE bytes, seq first, then the send time.
class Messages {
 public:
  Messages(Endpoints &ep, size_t size) : ep_(ep), message_(size, 'x') {}

  bool take(int64_t timeout_ns, uint64_t &seq, size_t &payload) {
    if (!ep_.take(timeout_ns, got_)) return false;
    seq = seq_of(got_);
    payload = got_.size() > kHeader ? got_.size() - kHeader : 0;
    return true;
  }
  void write(uint64_t seq, size_t payload, bool echo) {
    if (echo) return ep_.write(got_.data(), got_.size());  // the same bytes
    std::memcpy(message_.data(), &seq, sizeof seq);
    const int64_t sent = now_ns();
    std::memcpy(message_.data() + 8, &sent, sizeof sent);
    ep_.write(message_.data(), kHeader + payload);
  }
  void done_with_echo() {}  // the take copied it out already
  size_t payload_size() const { return message_.size() - kHeader; }

 private:
  Endpoints &ep_;
  std::vector<unsigned char> message_, got_;
};

}  // namespace

int main(int argc, char **argv) {
  unsigned port = 0;
  int used = 0;
  if (argc != 6 || (std::string(argv[1]) != "ping" && std::string(argv[1]) != "pong") ||
      std::sscanf(argv[2], "127.0.0.1:%u%n", &port, &used) != 1 || argv[2][used] != '\0') {
    std::fprintf(stderr, "usage: orte_probe ping|pong 127.0.0.1:PORT TAG SIZE SECONDS\n");
    return 2;
  }
  const size_t size = std::strtoul(argv[4], nullptr, 10);
  if (size <= kHeader || size > 65000) {
    std::fprintf(stderr, "orte_probe: SIZE is 33 to 65000 bytes\n");
    return 2;
  }
  const bool ping = std::string(argv[1]) == "ping";
  int rc;
  {
    Endpoints ep(int(port), argv[3], ping);
    Messages messages(ep, size);
    rc = ping ? probe::run_ping(messages, kLoop, std::strtod(argv[5], nullptr), kWarmup)
              : probe::run_pong(messages, kLoop);
  }
  return rc;
}
