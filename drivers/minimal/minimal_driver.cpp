// minimal: the smallest complete driver, a model to copy. Kernel UDP over 127.0.0.1 on
// the C++ SDK (psbench/sdk.hpp): each topic is one port derived from the run id and the
// topic name; the reader binds it, the writer sends one datagram per message (so
// max_payload is one datagram and nothing is fragmented). Best effort, volatile; notify
// wait (SO_RCVTIMEO), poll (MSG_DONTWAIT) and listener (a thread of the reader's).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"

namespace {

using psb::sdk::fail;

constexpr uint64_t kMaxPayload = 65507;            // the largest UDP datagram over IPv4
constexpr int64_t kListenerSliceNs = 100'000'000;  // how soon a listener sees it must stop
constexpr int kSocketBuffer = 8 << 20;             // asked for; the kernel may give less

// A port in [20000, 40000) that every process of the run computes alike for one topic:
// its index among the run's topics when the run lists them (no two share a port), else a
// hash of the run id and the topic.
uint16_t topic_port(const psb::sdk::RunSettings &run, const char *topic) {
  const int index = run.topic_index(topic);
  if (index < 0) return uint16_t(psb::sdk::id_in_range(run.run_id + "/" + topic, 20000, 20000));
  return uint16_t(psb::sdk::slot_in_range(run.run_id, uint32_t(index), 20000, 20000));
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sa;
}

// A UDP socket, closed with its owner.
using Socket = psb::sdk::Owned<int, &close, -1>;
int udp_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket(): %s", std::strerror(errno));
  return fd;
}

struct Minimal {
  static constexpr const char *name = "minimal";
  static constexpr const char *description =
      "minimal model driver: kernel UDP over 127.0.0.1, one datagram per message, "
      "one port per topic derived from the run id";
  static std::string version() {  // kept by the SDK: asked once
    utsname u{};
    uname(&u);
    return std::string("linux ") + u.release;
  }
  static psb::sdk::Capabilities capabilities() {
    static const char *const transports[] = {"loopback", nullptr};
    static const char *const option_keys[] = {nullptr};  // no options
    return {.reliability = PSB_BEST_EFFORT,
            .durability = PSB_VOLATILE,
            .history = 0,  // the socket buffer decides; no history to ask for
            .transports = transports,
            .option_keys = option_keys,
            .max_payload = kMaxPayload,
            .readers_per_topic = 1,  // one bound port
            .writers_per_topic = 0,  // any number of senders
            .crosses_hosts = 0};     // one host only, for now
  }
  // Every refusal, each on its own (the node appends one of a QoS it refused itself to
  // its own message). Called also for what the capability sets leave out: say why.
  static void check(const psb_config &cfg, psb::sdk::Refusals &refuse) {
    if (cfg.qos.reliability != PSB_BEST_EFFORT)
      refuse.add("reliability",
                 "reliability must be best_effort: UDP neither acknowledges nor resends");
    if (cfg.qos.durability != PSB_VOLATILE)
      refuse.add("durability", "durability must be volatile: nothing is kept for late readers");
    if (cfg.qos.history != 0)
      refuse.add("history",
                 "history cannot be set: the socket buffer decides what waits; leave it unset");
    if (cfg.max_payload > kMaxPayload)
      refuse.add("size", "messages of %llu bytes do not fit one datagram (at most %llu)",
                 (unsigned long long)cfg.max_payload, (unsigned long long)kMaxPayload);
  }

  struct Context {
    explicit Context(const psb_config &cfg) : max_payload(cfg.max_payload) {
      psb::sdk::Refusals refused;
      check(cfg, refused);
      run.keep(cfg, refused, "every port is derived from it");
      refused.raise();
      version();  // computed here, never on the timed path
    }
    psb::sdk::RunSettings run;  // run_id, run_topics
    const uint64_t max_payload;
  };

  class Writer {
   public:
    Writer(Context &ctx, const char *topic) {
      setsockopt(sock_, SOL_SOCKET, SO_SNDBUF, &kSocketBuffer, sizeof kSocketBuffer);
      const sockaddr_in to = loopback(topic_port(ctx.run, topic));
      if (connect(sock_, reinterpret_cast<const sockaddr *>(&to), sizeof to) != 0)
        fail("connect to 127.0.0.1:%u: %s", ntohs(to.sin_port), std::strerror(errno));
    }
    // Timed path. ECONNREFUSED reports an earlier datagram no socket received (no
    // reader bound yet): best effort, so that message is lost, not an error.
    void write(const void *data, size_t len) {
      if (send(sock_, data, len, 0) < 0 && errno != ECONNREFUSED)
        fail("send: %s", std::strerror(errno));
    }

   private:
    Socket sock_{udp_socket()};
  };

  class Reader {
   public:
    Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
        : buffer_(ctx.max_payload + 1) {  // one byte more: a longer datagram is not ours
      setsockopt(sock_, SOL_SOCKET, SO_RCVBUF, &kSocketBuffer, sizeof kSocketBuffer);
      const sockaddr_in at = loopback(topic_port(ctx.run, topic));
      if (bind(sock_, reinterpret_cast<const sockaddr *>(&at), sizeof at) != 0)
        fail(
            "cannot bind 127.0.0.1:%u: %s (one reader per topic; or another run holds "
            "the port)",
            ntohs(at.sin_port), std::strerror(errno));
      if (listener) {
        set_timeout(kListenerSliceNs);
        thread_.start(listener, [this, listener] {  // a throw ends it: listener.error()
          const void *data;
          size_t len;
          while (!thread_.stopping())
            if (receive(0, data, len)) listener(data, len);
        });
      }
    }
    ~Reader() {
      thread_.stop();  // within kListenerSliceNs
    }

    // Timed path: wait blocks up to timeout_ns (SO_RCVTIMEO, set only when it changes);
    // poll (timeout 0) does not block.
    bool take(int64_t timeout_ns, const void *&data, size_t &len) {
      if (timeout_ns == 0) return receive(MSG_DONTWAIT, data, len);
      set_timeout(timeout_ns);
      return receive(0, data, len);
    }

   private:
    bool receive(int flags, const void *&data, size_t &len) {
      for (;;) {
        const ssize_t n = recv(sock_, buffer_.data(), buffer_.size(), flags);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
          fail("recv: %s", std::strerror(errno));
        }
        if (size_t(n) == buffer_.size()) continue;  // larger than max_payload: not ours
        data = buffer_.data();
        len = size_t(n);
        return true;
      }
    }
    void set_timeout(int64_t timeout_ns) {
      if (timeout_ns == timeout_ns_) return;
      timeval tv{timeout_ns / 1'000'000'000, (timeout_ns % 1'000'000'000) / 1000};
      if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;  // 0 would mean "forever"
      if (setsockopt(sock_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
        fail("SO_RCVTIMEO: %s", std::strerror(errno));
      timeout_ns_ = timeout_ns;
    }

    Socket sock_{udp_socket()};
    std::vector<unsigned char> buffer_;
    int64_t timeout_ns_ = -1;          // SO_RCVTIMEO in force; -1: none yet
    psb::sdk::ListenerThread thread_;  // listener only; last, so that it starts after the rest
  };
};

}  // namespace

PSB_SDK_DRIVER(Minimal)
