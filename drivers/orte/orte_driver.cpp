// orte: ORTE 0.3.4 (OCERA Real-Time Ethernet, CTU Prague; RTPS as RTI published it before
// DDSI-RTPS 2.0) on the C++ SDK, built from source (make driver-orte; README.md).
//
// A context is one ORTE application (ORTEDomainAppCreate) in the domain of the run's
// manager: the manager psbench started (ortemanager-service) listens on UDP 127.0.0.1,
// port 7400 + 10 x domain, and the node gets broker=127.0.0.1:PORT, from which it derives
// the domain as the launcher does (domain_of). Every socket of an application is bound to
// a loopback address of its own (127.x.y.z), the only one it advertises. A psbench
// message is one issue of one registered
// type, "psbench": its bytes behind a 4-byte CDR length, serialized from the caller's
// buffer and read in place on the receiving side (no copy in the driver). A writer is a
// publication, a reader a subscription (best effort, or strict reliable) whose receive
// callback, on ORTE's user-data receive thread, copies the sample into a queue of
// recycled buffers: take() hands it out (wait, poll), or a thread of the driver's calls
// the node's listener with it (ORTE calls back holding its object lock, under which a
// listener could not write).
#include <orte.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"
#include "sdk_info.h"  // PSBENCH_ORTE_TAG, _COMMIT, _FLAGS: from psbench-sdk.json

namespace {

using psb::sdk::fail;

constexpr const char *kType = "psbench";
// One issue is one UDP datagram (RTPS 1.0 has no fragments): ORTE's user-data limit per
// packet, raised from its 0x3000 to nearly 64 KiB, holds the headers, the length and the
// payload.
constexpr unsigned kUserBytesPerPacket = 0xff00;
constexpr uint64_t kMaxPayload = 65000;
// The datagram a strict reliable issue leaves in, with the heartbeat that asks for its
// acknowledgement (ORTE's 1500, an Ethernet frame, left no room after an issue over about
// 1.4 KB: the heartbeat followed at ORTE's 50 ms heartbeat period, and so did every write
// waiting for room in the queue). At most 65507, the largest UDP datagram.
constexpr unsigned kMetaBytesPerPacket = 0xffc0;
constexpr int kPersistenceS = 86400;  // how long an issue counts; one writer per topic
constexpr int kMaxTopic = MAX_PATHNAME - 1;
constexpr int64_t kListenerSliceNs = 100'000'000;  // how soon a listener sees it must stop

// Keep in step with ortemanager-service (domain_of): the domain of psbench's port.
int domain_of(int port) { return 1 + port % 5000; }
int manager_port(int domain) { return 7400 + 10 * domain; }  // ORTE's Domain2Port

// Whether a socket of this host has UDP 127.0.0.1:port (the manager's).
bool udp_bound(int port) {
  char wanted[16];
  std::snprintf(wanted, sizeof wanted, "0100007F:%04X", port);
  std::ifstream table("/proc/net/udp");
  std::string line;
  std::getline(table, line);  // the heading
  while (std::getline(table, line)) {
    const size_t at = line.find(':');  // "  sl: local_address ..."
    if (at != std::string::npos && line.compare(at + 2, std::strlen(wanted), wanted) == 0)
      return true;
  }
  return false;
}

// 127.P.P.N: P.P the process id's low 16 bits, N counting this process's applications
// (1 to 254): two live or recently closed applications hardly ever share one.
IPAddress own_loopback_address() {
  static std::atomic<uint32_t> count{0};
  const uint32_t pid = uint32_t(getpid()) & 0xffff;
  return (127u << 24) | (pid << 8) | (1 + count.fetch_add(1) % 254);
}

struct Settings : psb::sdk::RunSettings {
  int port = 0;  // the broker option's: the launcher's readiness port
  int domain = 0;
  uint32_t send_queue = 1;      // ORTE's sendQueueSize (its default)
  uint32_t critical_level = 1;  // ORTE's criticalQueueLevel (its default)
};

Settings parse_settings(const psb_config &cfg, psb::sdk::Refusals &refuse) {
  const psb::sdk::Options options(cfg, refuse);
  Settings s;
  s.keep(cfg, refuse, "it names the topics");
  const char *broker = options.required(
      "broker", "127.0.0.1:PORT",
      "psbench gives the port of the ortemanager it starts (drivers/orte/README.md)");
  if (broker != nullptr) {
    unsigned port = 0;
    int used = 0;
    if (std::sscanf(broker, "127.0.0.1:%u%n", &port, &used) != 1 || broker[used] != '\0' ||
        port == 0 || port > 65535)
      refuse.add("option:broker",
                 "option broker='%s' is not 127.0.0.1:PORT (ORTE's manager is on this host)",
                 broker);
    else
      s.port = int(port);
  }
  s.domain = domain_of(s.port);
  s.send_queue = uint32_t(options.number("send_queue", 1, 1, 4096));
  s.critical_level = uint32_t(options.number("critical_level", 1, 1, 4096));
  if (s.critical_level > s.send_queue)
    refuse.add("option:critical_level", "option critical_level=%u is over send_queue=%u",
               s.critical_level, s.send_queue);
  if (cfg.qos.durability != PSB_VOLATILE)
    refuse.add("durability",
               "durability must be volatile: ORTE keeps nothing for a subscription that "
               "comes later");
  if (cfg.qos.history != 0)
    refuse.add("history",
               "history cannot be set: ORTE's publication queue (option send_queue, "
               "ORTE's sendQueueSize) decides; leave it unset");
  if (cfg.max_payload > kMaxPayload)
    refuse.add("size", "messages of %llu bytes do not fit one ORTE issue (at most %llu)",
               (unsigned long long)cfg.max_payload, (unsigned long long)kMaxPayload);
  return s;
}

// What is written: the caller's bytes during ORTEPublicationSend, which serializes them.
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
  if (param->recv_size >= 0) return param->recv_size;  // (receiving: not used)
  return int(4 + static_cast<Outgoing *>(static_cast<void *>(param->data))->len);
}

// A subscription's end in the driver: what ORTE calls back with, on its user-data
// receive thread, holding ORTE's object lock; the callback only queues a copy of the
// sample (a listener that wrote from there, as pong does, would wait for that lock
// forever). It outlives the Reader (ORTE removes a destroyed subscription later, on its
// own threads) until the context destroys the application; a closed one ignores what
// still comes.
struct Sink {
  const void *data = nullptr;  // the issue, in ORTE's buffer, during the callback
  uint32_t len = 0;
  bool malformed = false;
  uint64_t max_payload = 0;
  std::mutex mu;
  bool closed = false;
  std::condition_variable ready;
  std::deque<std::vector<unsigned char>> queue;   // samples waiting, oldest first
  std::vector<std::vector<unsigned char>> spare;  // buffers to reuse: none allocated once warm
  std::string error;                              // a malformed sample, for take() or the listener
};

void deserialize(CDR_Codec *codec, void *instance) {
  auto *sink = static_cast<Sink *>(instance);
  CORBA_unsigned_long len = 0;
  sink->malformed =
      !CDR_get_ulong(codec, &len) || len > codec->buf_len - codec->rptr || len > sink->max_payload;
  sink->data = codec->buffer + codec->rptr;
  sink->len = sink->malformed ? 0 : uint32_t(len);
}

void on_issue(const ORTERecvInfo *info, void *instance, void *) {
  auto *sink = static_cast<Sink *>(instance);
  if (info->status != NEW_DATA) return;  // a deadline: none is set that could pass
  std::lock_guard<std::mutex> lock(sink->mu);
  if (sink->closed) return;
  if (sink->malformed) {
    sink->error = std::string("a malformed or oversized issue on ") + info->topic;
  } else {
    std::vector<unsigned char> buffer;
    if (!sink->spare.empty()) {
      buffer = std::move(sink->spare.back());
      sink->spare.pop_back();
    }
    const auto *bytes = static_cast<const unsigned char *>(sink->data);
    buffer.assign(bytes, bytes + sink->len);
    sink->queue.push_back(std::move(buffer));
  }
  sink->ready.notify_one();
}

void registration_failed(void *param) { static_cast<std::atomic<bool> *>(param)->store(true); }

struct Orte {
  static constexpr const char *name = "orte";
  static constexpr const char *description =
      "ORTE 0.3.4 (OCERA Real-Time Ethernet, RTPS 1.0) over UDP on loopback; "
      "applications find each other through ortemanager, one per domain";
  static std::string version() {
    static std::once_flag once;
    std::call_once(once, ORTEInit);
    ORTEDomainProp prop;
    ORTEDomainPropDefaultGet(&prop);  // "orte 0.3.4, compiled: DATE TIME"
    std::string text = prop.version;
    text = text.substr(0, text.find(','));
    return text + " (built from source: " PSBENCH_ORTE_TAG " " +
           std::string(PSBENCH_ORTE_COMMIT).substr(0, 12) + "; " PSBENCH_ORTE_FLAGS ")";
  }
  static psb::sdk::Capabilities capabilities() {
    static const char *const transports[] = {"udp", nullptr};
    static const char *const option_keys[] = {"broker", "send_queue", "critical_level", nullptr};
    return {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
            .durability = PSB_VOLATILE,
            .history = 0,  // the publication's queue decides (send_queue)
            .transports = transports,
            .option_keys = option_keys,
            .max_payload = kMaxPayload,
            .writers_per_topic = 1};  // a subscription takes one publication's issues
  }
  static void check(const psb_config &cfg, psb::sdk::Refusals &refuse) {
    parse_settings(cfg, refuse);
  }

  struct Context {
    explicit Context(const psb_config &cfg)
        : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {
      version();  // ORTEInit, once per process
      const int port = manager_port(settings.domain);
      if (!udp_bound(port))
        fail(
            "no ORTE manager of domain %d on udp 127.0.0.1:%d (psbench starts one for "
            "broker=127.0.0.1:%d: drivers/orte/ortemanager-service %d)",
            settings.domain, port, settings.port, settings.port);
      ORTEDomainProp prop;
      ORTEDomainPropDefaultGet(&prop);
      // Every socket on a loopback address of this application's own, which it also
      // advertises and which becomes its GUID's host id: ORTE makes the rest of the GUID
      // from its send socket's ephemeral port, and a manager (or application) that still
      // remembers a closed application whose port a new one was given ignores the new
      // one for purgeTime (60 s): with 127.0.0.1 for all, that left about one pair in a
      // hundred unmatched when contexts came and went quickly.
      prop.listen = own_loopback_address();
      prop.IFCount = 1;
      prop.IFProp[0].ifFlags = 0;
      prop.IFProp[0].ipAddress = prop.listen;
      // The manager takes an application as its own by a shared key; ORTE's default key,
      // 127.0.0.1, counts only for an application that sends from 127.0.0.1 itself.
      static char key[] = "127.0.0.2";  // ortemanager-service gives the manager -k alike
      prop.keys = key;                  // (writable: ORTE cuts the list in place)
      prop.recvBuffSize = prop.sendBuffSize = 0x10000;
      prop.wireProp.userBytesPerPacket = kUserBytesPerPacket;
      prop.wireProp.metaBytesPerPacket = kMetaBytesPerPacket;
      prop.publPropDefault.sendQueueSize = settings.send_queue;
      prop.publPropDefault.criticalQueueLevel = settings.critical_level;
      ORTEDomainAppEvents events;
      ORTEDomainInitEvents(&events);
      events.onRegFail = registration_failed;
      events.onRegFailParam = &unregistered;
      domain = ORTEDomainAppCreate(settings.domain, &prop, &events, ORTE_FALSE);
      if (domain == nullptr)
        fail("ORTEDomainAppCreate(domain %d) failed: %s", settings.domain, std::strerror(errno));
      if (ORTETypeRegisterAdd(domain, kType, serialize, deserialize, serialized_size,
                              kUserBytesPerPacket) != ORTE_OK) {
        ORTEDomainAppDestroy(domain);
        fail("ORTETypeRegisterAdd(%s) failed", kType);
      }
    }
    ~Context() {
      ORTEDomainAppDestroy(domain);  // stops and joins ORTE's threads: no callback after
    }
    void registered() const {
      if (unregistered.load())
        fail(
            "the application could not register with the manager of domain %d (udp "
            "127.0.0.1:%d)",
            settings.domain, manager_port(settings.domain));
    }

    Settings settings;
    std::atomic<bool> unregistered{false};
    ORTEDomain *domain = nullptr;
    std::mutex sinks_mu;
    std::vector<std::unique_ptr<Sink>> sinks;  // freed after the application
  };

  static void check_topic(const char *topic) {
    if (std::strlen(topic) > size_t(kMaxTopic))
      fail("topic %s is longer than ORTE's %d characters", topic, kMaxTopic);
  }

  class Writer {
   public:
    Writer(Context &ctx, const char *topic) : ctx_(ctx) {
      check_topic(topic);
      NtpTime persistence;
      NTPTIME_BUILD(persistence, kPersistenceS);
      pub_ = ORTEPublicationCreate(ctx.domain, topic, kType, &out_, &persistence, 1, nullptr,
                                   nullptr, nullptr);
      if (pub_ == nullptr) fail("ORTEPublicationCreate(%s) failed", topic);
    }
    ~Writer() { ORTEPublicationDestroy(pub_); }

    // Timed path: ORTE serializes the bytes into its own issue here, and its send thread
    // sends it. A strict reliable publication whose queue is full blocks until there is
    // room, ORTE's maxBlockTime (20 s) at most.
    void write(const void *data, size_t len) {
      out_ = {data, uint32_t(len)};
      const int r = ORTEPublicationSend(pub_);
      if (r == ORTE_QUEUE_FULL)
        fail("the publication's queue (send_queue=%u) stayed full for ORTE's maxBlockTime",
             ctx_.settings.send_queue);
      if (r != ORTE_OK) fail("ORTEPublicationSend returned %d", r);
    }
    // Every issue out of the queue: sent (best effort) or acknowledged by every strict
    // reliable subscription.
    bool drain(int64_t timeout_ns) {
      return psb::sdk::wait_until(timeout_ns, [this] { return status().issues == 0; });
    }
    int matched() const {
      ctx_.registered();
      const ORTEPublStatus s = status();
      return int(s.strict + s.bestEffort);
    }

   private:
    ORTEPublStatus status() const {
      ORTEPublStatus s{};
      ORTEPublicationGetStatus(pub_, &s);
      return s;
    }
    Context &ctx_;
    Outgoing out_;
    ORTEPublication *pub_ = nullptr;
  };

  class Reader {
   public:
    Reader(Context &ctx, const char *topic, psb::sdk::Listener listener) : ctx_(ctx) {
      check_topic(topic);
      {
        std::lock_guard<std::mutex> lock(ctx.sinks_mu);
        sink_ = ctx.sinks.emplace_back(std::make_unique<Sink>()).get();
      }
      sink_->max_payload = ctx.settings.max_payload;
      NtpTime deadline, separation;
      NTPTIME_BUILD(deadline, kPersistenceS);
      NTPTIME_ZERO(separation);
      const bool strict = ctx.settings.qos.reliability == PSB_RELIABLE;
      sub_ = ORTESubscriptionCreate(ctx.domain, IMMEDIATE, strict ? STRICT_RELIABLE : BEST_EFFORTS,
                                    topic, kType, sink_, &deadline, &separation, on_issue, nullptr,
                                    IPADDRESS_INVALID);
      if (sub_ == nullptr) fail("ORTESubscriptionCreate(%s) failed", topic);
      if (listener)  // the node's listener on a thread of the driver's, never ORTE's
        thread_.start(listener, [this, listener] {
          const void *data;
          size_t len;
          while (!thread_.stopping()) {
            try {
              if (take(kListenerSliceNs, data, len)) listener(data, len);
            } catch (const psb::sdk::Error &e) {
              listener.error("%s", e.what());
            }
          }
        });
    }
    ~Reader() {
      {
        std::lock_guard<std::mutex> lock(sink_->mu);
        sink_->closed = true;
      }
      sink_->ready.notify_all();
      thread_.stop();
      ORTESubscriptionDestroy(sub_);
    }

    // Timed path: the oldest sample waiting, valid until the next take() or release().
    bool take(int64_t timeout_ns, const void *&data, size_t &len) {
      std::unique_lock<std::mutex> lock(sink_->mu);
      recycle();
      if (sink_->queue.empty() && timeout_ns != 0)
        sink_->ready.wait_for(lock, std::chrono::nanoseconds(timeout_ns), [this] {
          return !sink_->queue.empty() || !sink_->error.empty() || sink_->closed;
        });
      if (!sink_->error.empty()) fail("%s", std::exchange(sink_->error, "").c_str());
      if (sink_->queue.empty()) return false;
      taken_ = std::move(sink_->queue.front());
      sink_->queue.pop_front();
      holding_ = true;
      data = taken_.data();
      len = taken_.size();
      return true;
    }
    void release() {
      std::lock_guard<std::mutex> lock(sink_->mu);
      recycle();
    }
    int matched() const {
      ctx_.registered();
      ORTESubsStatus s{};
      ORTESubscriptionGetStatus(sub_, &s);
      return int(s.strict + s.bestEffort);
    }

   private:
    void recycle() {  // under sink_->mu
      if (!holding_) return;
      sink_->spare.push_back(std::move(taken_));
      holding_ = false;
    }
    Context &ctx_;
    Sink *sink_ = nullptr;  // the context's
    ORTESubscription *sub_ = nullptr;
    std::vector<unsigned char> taken_;
    bool holding_ = false;
    psb::sdk::ListenerThread thread_;  // listener only; last, so that it starts after the rest
  };
};

}  // namespace

PSB_SDK_DRIVER(Orte)
