// udp: kernel UDP sockets, the network floor every middleware result is read against.
// Each topic is one port; the reader binds it, the writer sends to it: on loopback to the
// run's own 127.x.y.z, with unicast to each peer address, with multicast to a group of
// the run and topic, with broadcast to the link's broadcast address. Best effort, volatile;
// messages over one datagram are fragmented (udp_reassembly.h). On the C++ SDK (psbench/sdk.hpp:
// PSB_SDK_DRIVER at the end).
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "psbench/sdk.hpp"
extern "C" {
#include "udp_reassembly.h"
}

namespace {

using psb::sdk::fail;
using psb::sdk::Refusals;

// Ports port_base .. port_base + kPortSpan - 1: by default 20000..32767, below Linux's
// ephemeral range (32768..60999), where any outgoing socket may hold a port.
constexpr unsigned kPortSpan = 12768;
constexpr int64_t kListenerSliceNs = 100'000'000;  // how soon a listener sees it must stop
constexpr int kSocketBuffer = 16 << 20;  // a 4 MiB message in flight; root may exceed rmem_max

enum class Transport { loopback, unicast, multicast, broadcast };
constexpr const char *kTransportNames[] = {"loopback", "unicast", "multicast", "broadcast",
                                           nullptr};
// A datagram to a group or broadcast address reaches every reader bound to it.
bool fans_out(Transport t) { return t == Transport::multicast || t == Transport::broadcast; }

// Fault injection, for testing what psbench does when a node misbehaves: after
// fault_after writes in one writer, crash (abort), hang (never return) or exit(7).
enum class Fault { none, crash, hang, exit };

struct Settings : psb::sdk::RunSettings {
  Transport transport = Transport::loopback;
  unsigned port_base = 20000;
  Fault fault = Fault::none;
  unsigned long fault_after = 0;
  in_addr bind_addr{};         // loopback, unicast: the address readers bind
  std::vector<in_addr> peers;  // loopback, unicast: where writers send, each message
  // unicast to the run's hosts: a peer's "port unreachable" (no reader there yet, or any
  // more) does not fail a write (see Writer::write).
  bool peers_are_hosts = false;
  in_addr multicast_if{};  // multicast, broadcast: the interface's address (or 127.0.0.1)
  in_addr broadcast{};     // broadcast: its broadcast address (127.255.255.255 on lo), by open()
};

// The broadcast address of the interface that has `local` (getifaddrs), or nullopt.
std::optional<in_addr> broadcast_of(in_addr local) {
  ifaddrs *all = nullptr;
  if (getifaddrs(&all) != 0) return std::nullopt;
  std::optional<in_addr> found;
  for (const ifaddrs *i = all; i != nullptr && !found; i = i->ifa_next) {
    const auto *addr = reinterpret_cast<const sockaddr_in *>(i->ifa_addr);
    const auto *bcast = reinterpret_cast<const sockaddr_in *>(i->ifa_broadaddr);
    if (addr != nullptr && addr->sin_family == AF_INET && (i->ifa_flags & IFF_BROADCAST) &&
        bcast != nullptr && bcast->sin_addr.s_addr != INADDR_ANY &&
        addr->sin_addr.s_addr == local.s_addr)
      found = bcast->sin_addr;
  }
  freeifaddrs(all);
  return found;
}

// A run's own loopback address, 127.x.y.z from FNV-1a of the run id (x.y.z never .0 or
// .255 last): all of 127/8 is `lo`, so concurrent runs whose topics hash to the same port
// still bind different sockets.
in_addr loopback_address(const std::string &run_id) {
  uint32_t h = psb::sdk::fnv1a32(run_id);
  if ((h & 0xffu) == 0 || (h & 0xffu) == 255) h ^= 1u;
  return in_addr{htonl(0x7f000000u | (h & 0x00ffffffu))};
}

// The port a topic's reader binds. When the run lists its topics (ABI 8), the topic's
// index among them from a start derived from the run id: no two topics of the run share a
// port. Else derived from the (run-unique) topic name, where two topics of a run may hash
// to one port (on loopback and unicast the second reader then cannot bind; on broadcast
// each would get the other's datagrams).
uint16_t topic_port(const Settings &s, const char *topic) {
  if (s.run_topics.empty()) return uint16_t(psb::sdk::id_in_range(topic, s.port_base, kPortSpan));
  const int index = s.topic_index(topic);
  if (index < 0)
    fail(
        "topic %s is not among the run's %zu topics (psb_config.run_topics), so it has no port "
        "of its own; list every topic the run uses",
        topic, s.run_topics.size());
  return uint16_t(psb::sdk::slot_in_range(s.run_id, uint32_t(index), s.port_base, kPortSpan));
}

// The multicast group of a topic: 239.255.x.y, x.y from FNV-1a of the run id and then the
// topic, so concurrent runs sending to one port meet on different groups (and a reader
// bound to its group gets its own run's datagrams only). Of the run id's first 127
// characters, as the driver has always hashed it.
in_addr topic_group(const Settings &s, const char *topic) {
  const uint32_t h = psb::sdk::fnv1a32(s.run_id.substr(0, 127) + topic);
  return in_addr{htonl(0xefff0000u | ((h >> 16) ^ (h & 0xffffu)))};
}

void parse_fault(const psb::sdk::Options &options, Refusals &refuse, Settings &s) {
  const char *fault = options.find("fault"), *after = options.find("fault_after");
  if (fault == nullptr) {
    if (after != nullptr)
      refuse.add("option:fault_after", "option fault_after needs option fault=crash|hang|exit");
    return;
  }
  const int f = psb::sdk::index_in(fault, {"crash", "hang", "exit"});
  if (f < 0)
    refuse.add("option:fault", "option fault='%s' is not one of crash|hang|exit", fault);
  else
    s.fault = Fault(f + 1);
  char *end = nullptr;
  s.fault_after = after != nullptr ? std::strtoul(after, &end, 10) : 0;
  if (after == nullptr || *end != '\0' || s.fault_after == 0)
    refuse.add(after != nullptr ? "option:fault_after" : "option:fault",
               "option fault needs fault_after=N (N >= 1 writes before the fault)");
}

// Where readers bind and writers send. Across hosts (local_address set; not IPv4, or
// loopback: refused by the SDK) unicast binds the local address and sends to every peer.
void parse_addresses(const psb_config &cfg, const psb::sdk::Options &options, Refusals &refuse,
                     Settings &s) {
  const char *peer = options.find("peer"), *bind_to = options.find("bind");
  const bool hosts = !s.local_address.empty();
  const int t = psb::sdk::index_in(cfg.transport, kTransportNames);
  s.transport = t > 0 ? Transport(t) : Transport::loopback;  // another: refused by the SDK
  in_addr local{htonl(INADDR_LOOPBACK)};
  if (hosts) inet_pton(AF_INET, s.local_address.c_str(), &local);
  if (s.transport != Transport::unicast) {
    if (peer != nullptr || bind_to != nullptr)
      refuse.add(peer != nullptr ? "option:peer" : "option:bind", "%s",
                 s.transport == Transport::loopback
                     ? "options peer/bind belong to transport 'unicast'; loopback uses "
                       "127.x.y.z of the run id"
                     : "options peer/bind belong to transport 'unicast'; multicast and "
                       "broadcast send on the interface of --address (127.0.0.1 on one host)");
    if (s.transport == Transport::multicast) {
      s.multicast_if = local;
      return;
    }
    if (s.transport == Transport::broadcast) {
      s.multicast_if = local;  // whose broadcast address open() looks up (not check(): it
      return;                  // may run on another host than the run's node)
    }
    s.bind_addr = loopback_address(s.run_id);
    s.peers = {s.bind_addr};
    return;
  }
  // unicast: readers bind `bind` (default: 127.0.0.1 on one host, so that nothing off the
  // machine reaches them; --address across hosts), writers send to `peer` (across hosts
  // without it: to every --peer).
  if (peer != nullptr) {
    s.peers.resize(1);
    if (inet_pton(AF_INET, peer, &s.peers[0]) != 1)
      refuse.add("option:peer", "option peer='%s' is not an IPv4 address", peer);
  } else if (hosts) {
    for (const std::string &p : s.peer_addresses)
      inet_pton(AF_INET, p.c_str(), &s.peers.emplace_back());
    if (s.peers.empty())
      refuse.add("hosts",
                 "transport 'unicast' across hosts sends to the run's other hosts, and none was "
                 "given: give each one's address with --peer ADDRESS (or option peer=ADDRESS)");
    s.peers_are_hosts = true;
  } else {
    refuse.add("option:peer",
               "transport 'unicast' needs option peer=<IPv4 address the writer sends to>");
  }
  s.bind_addr.s_addr = local.s_addr;  // 127.0.0.1, or --address across hosts
  if (bind_to != nullptr && inet_pton(AF_INET, bind_to, &s.bind_addr) != 1)
    refuse.add("option:bind", "option bind='%s' is not an IPv4 address", bind_to);
}

// Records every refusal: check() hands them to the node, open() throws them.
Settings parse_settings(const psb_config &cfg, Refusals &refuse) {
  Settings s;
  // Also judged for what the capability sets leave out: say why it is refused.
  if (cfg.qos.reliability != PSB_BEST_EFFORT)
    refuse.add("reliability",
               "reliability must be best_effort: the kernel neither acknowledges nor resends");
  if (cfg.qos.durability != PSB_VOLATILE)
    refuse.add("durability", "durability must be volatile: nothing is kept for late readers");
  if (cfg.qos.history != 0)
    refuse.add(
        "history",
        "history cannot be set: the socket receive buffer decides what waits; leave it unset");
  const psb::sdk::Options options(cfg, refuse);
  s.port_base =
      unsigned(options.number("port_base", 20000, 1024, 65535 - kPortSpan,
                              "a number from 1024 to " + std::to_string(65535 - kPortSpan)));
  parse_fault(options, refuse, s);
  s.keep(cfg, refuse, "the loopback address and multicast groups derive from it");
  parse_addresses(cfg, options, refuse, s);
  if (s.run_topics.size() > kPortSpan)
    refuse.add("driver", "the run has %zu topics, more than the %u ports it can have (one each)",
               s.run_topics.size(), kPortSpan);
  // A unicast datagram reaches one bound socket; a multicast one every socket in the group.
  if (cfg.readers > 1 && !fans_out(s.transport))
    refuse.add("subscribers",
               "transport %s delivers each datagram to one bound socket, so a topic has one "
               "reader; %u readers need --transport multicast or broadcast",
               kTransportNames[int(s.transport)], cfg.readers);
  return s;
}

// ---- sockets ---------------------------------------------------------------------------

using Socket = psb::sdk::Owned<int, &close, -1>;

int udp_socket() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket(): %s", std::strerror(errno));
  return fd;
}

void grow_buffer(int fd, int opt_force, int opt) {
  if (setsockopt(fd, SOL_SOCKET, opt_force, &kSocketBuffer, sizeof kSocketBuffer) != 0)
    setsockopt(fd, SOL_SOCKET, opt, &kSocketBuffer, sizeof kSocketBuffer);
}

sockaddr_in socket_address(in_addr addr, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr = addr;
  return sa;
}

std::string text(in_addr addr) {
  char t[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &addr, t, sizeof t);
  return t;
}

// via: "" or " through the interface of X", for the message.
void connect_to(int fd, in_addr addr, uint16_t port, const std::string &via = "") {
  const sockaddr_in sa = socket_address(addr, port);
  if (connect(fd, reinterpret_cast<const sockaddr *>(&sa), sizeof sa) != 0)
    fail("cannot connect to %s:%u%s: %s", text(addr).c_str(), port, via.c_str(),
         std::strerror(errno));
}

void bind_to(int fd, in_addr addr, uint16_t port, const char *why) {
  const sockaddr_in sa = socket_address(addr, port);
  if (bind(fd, reinterpret_cast<const sockaddr *>(&sa), sizeof sa) != 0)
    fail("cannot bind %s:%u: %s (%s)", text(addr).c_str(), port, std::strerror(errno), why);
}

[[noreturn]] void inject_fault(Fault fault) {
  if (fault == Fault::crash) abort();
  if (fault == Fault::exit) _exit(7);
  for (;;) pause();  // hang: signals interrupt pause(), and it goes back to waiting
}

// ---- the driver ------------------------------------------------------------------------

struct Udp {
  static constexpr const char *name = "udp";
  static constexpr const char *description =
      "kernel UDP sockets (baseline): one port per topic, fragments over 65000 bytes";
  static std::string version() {
    utsname u{};
    uname(&u);
    return std::string("linux ") + u.release;
  }
  static constexpr const char *option_keys[] = {"port_base", "peer",        "bind",
                                                "fault",     "fault_after", nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT,
      .durability = PSB_VOLATILE,
      .history = 0,  // the kernel socket buffer decides; no history QoS to ask for
      .transports = kTransportNames,
      .option_keys = option_keys,
      .max_payload = 4u << 20,
      .readers_per_topic = 0,  // multicast, broadcast: any number; the others one (check())
      .writers_per_topic = 0,  // any number of senders; fragmented messages of up to
                               // UDP_ASSEMBLIES writers at once are each assembled on their own
      .crosses_hosts = 1};     // on host_transports
  // unicast sends to every --peer, multicast to a group on the interface of --address,
  // broadcast to that interface's broadcast address.
  static constexpr const char *host_transports[] = {"unicast", "multicast", "broadcast", nullptr};
  static void check(const psb_config &cfg, Refusals &refuse) { parse_settings(cfg, refuse); }

  struct Context : Settings {
    explicit Context(const psb_config &cfg)
        : Settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {
      if (transport != Transport::broadcast) return;
      const std::optional<in_addr> b = local_address.empty() ? in_addr{htonl(0x7fffffffu)}
                                                             // lo: 127.255.255.255
                                                             : broadcast_of(multicast_if);
      if (!b)
        fail("transport broadcast: no interface here has address %s and a broadcast address",
             text(multicast_if).c_str());
      broadcast = *b;
    }
  };

  // No matched(): UDP cannot tell.
  class Writer {
   public:
    Writer(Context &ctx, const char *topic)
        : socks_(fans_out(ctx.transport) ? 1 : ctx.peers.size()),
          ignore_refused_(ctx.peers_are_hosts),
          fault_(ctx.fault),
          writes_left_(ctx.fault_after) {
      const uint16_t port = topic_port(ctx, topic);
      for (size_t i = 0; i < socks_.size(); ++i) {
        socks_[i] = udp_socket();
        grow_buffer(socks_[i], SO_SNDBUFFORCE, SO_SNDBUF);
        if (ctx.transport == Transport::broadcast) {
          const int on = 1;
          if (setsockopt(socks_[i], SOL_SOCKET, SO_BROADCAST, &on, sizeof on) != 0)
            fail("SO_BROADCAST: %s", std::strerror(errno));
          connect_to(socks_[i], ctx.broadcast, port);
          continue;
        }
        if (ctx.transport != Transport::multicast) {
          connect_to(socks_[i], ctx.peers[i], port);
          continue;
        }
        // Through the interface of --address, TTL 1 (never routed beyond the link), and
        // IP_MULTICAST_LOOP on (readers on the writer's own host get it too).
        const unsigned char loop = 1, ttl = 1;
        const in_addr &iface = ctx.multicast_if;
        if (setsockopt(socks_[i], IPPROTO_IP, IP_MULTICAST_IF, &iface, sizeof iface) != 0 ||
            setsockopt(socks_[i], IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0 ||
            setsockopt(socks_[i], IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0)
          fail("cannot send multicast through the interface of %s: %s", text(iface).c_str(),
               std::strerror(errno));
        connect_to(socks_[i], topic_group(ctx, topic), port,
                   " through the interface of " + text(iface));
      }
    }

    // Timed path: one datagram per fragment to every destination.
    void write(const void *data, size_t len) {
      if (fault_ != Fault::none && --writes_left_ == 0) inject_fault(fault_);
      udp_fragment_prefix prefix{next_message_id_++, uint32_t(len), 0};
      iovec iov[2] = {{&prefix, sizeof prefix}, {}};
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = 2;
      do {
        iov[1].iov_base = static_cast<uint8_t *>(const_cast<void *>(data)) + prefix.offset;
        iov[1].iov_len = std::min<size_t>(len - prefix.offset, UDP_FRAGMENT_PAYLOAD);
        for (const Socket &sock : socks_) send(sock, msg);
        prefix.offset += uint32_t(iov[1].iov_len);
      } while (prefix.offset < len);
    }

   private:
    // A connected socket reports a "port unreachable" of an earlier datagram (nobody bound
    // there) as ECONNREFUSED on a later send, which then did not go out: across hosts,
    // where a peer's reader may not exist yet (or any more), that send is made again, and
    // the datagram goes (lost at the peer, if still nobody is there).
    void send(int fd, const msghdr &msg) const {
      ssize_t sent = sendmsg(fd, &msg, 0);
      if (sent < 0 && errno == ECONNREFUSED && ignore_refused_) sent = sendmsg(fd, &msg, 0);
      if (sent >= 0) return;
      const int e = errno;
      sockaddr_in to{};
      socklen_t to_len = sizeof to;
      const bool named = getpeername(fd, reinterpret_cast<sockaddr *>(&to), &to_len) == 0;
      fail("send to %s: %s", named ? text(to.sin_addr).c_str() : "?", std::strerror(e));
    }

    std::vector<Socket> socks_;  // one connected socket per destination (a peer, or the group)
    const bool ignore_refused_;  // Settings::peers_are_hosts
    const Fault fault_;
    unsigned long writes_left_;  // until the fault
    uint32_t next_message_id_ = 0;
  };

  class Reader {
   public:
    Reader(Context &ctx, const char *topic, psb::sdk::Listener listener) {
      // One assembly per writer whose fragments may interleave; one is enough when no
      // message is fragmented. Zeroed now so that the first receive does not page-fault.
      asm_.count = ctx.max_payload > UDP_FRAGMENT_PAYLOAD ? UDP_ASSEMBLIES : 1;
      for (unsigned i = 0; i < asm_.count; ++i) {
        buffers_[i].resize(ctx.max_payload + UDP_FRAGMENT_PAYLOAD);
        asm_.a[i].buffer = buffers_[i].data();
        asm_.a[i].capacity = ctx.max_payload;
      }
      // A buffer smaller than one message would lose every message of that size.
      grow_buffer(sock_, SO_RCVBUFFORCE, SO_RCVBUF);
      int got = 0;
      socklen_t got_len = sizeof got;
      getsockopt(sock_, SOL_SOCKET, SO_RCVBUF, &got, &got_len);
      if (size_t(got) < 2 * ctx.max_payload)
        fail(
            "the socket receive buffer is %d bytes, too small for %llu-byte messages; run as "
            "root or raise net.core.rmem_max (sysctl -w net.core.rmem_max=%d)",
            got, static_cast<unsigned long long>(ctx.max_payload), kSocketBuffer);
      const uint16_t port = topic_port(ctx, topic);
      if (!fans_out(ctx.transport)) {
        bind_to(sock_, ctx.bind_addr, port,
                "udp is one reader per topic, so a second subscriber of it is refused; or "
                "another run is on this port: set option port_base");
      } else {
        // Bound to group:port or broadcast:port (SO_REUSEADDR: several readers of a topic
        // on one host each get every datagram); a group joined on the interface of
        // --address.
        const bool multicast = ctx.transport == Transport::multicast;
        const in_addr to = multicast ? topic_group(ctx, topic) : ctx.broadcast;
        const int on = 1;
        if (setsockopt(sock_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0)
          fail("cannot bind %s:%u: %s (another run is on this port: set option port_base)",
               text(to).c_str(), port, std::strerror(errno));
        bind_to(sock_, to, port, "another run is on this port: set option port_base");
      }
      if (ctx.transport == Transport::multicast) {
        const in_addr group = topic_group(ctx, topic);
        const ip_mreq join{group, ctx.multicast_if};
        if (setsockopt(sock_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof join) != 0)
          fail("cannot join multicast group %s on the interface of %s: %s", text(group).c_str(),
               text(ctx.multicast_if).c_str(), std::strerror(errno));
      }
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

    // Timed path: wait blocks up to timeout_ns (SO_RCVTIMEO, set only when it changes);
    // poll (timeout 0) does not block.
    bool take(int64_t timeout_ns, const void *&data, size_t &len) {
      if (timeout_ns == 0) return receive(MSG_DONTWAIT, data, len);
      set_timeout(timeout_ns);
      return receive(0, data, len);
    }

   private:
    // Receives datagrams until a whole message is assembled: false when none came within
    // the socket's timeout (or a signal interrupted the wait).
    bool receive(int flags, const void *&data, size_t &len) {
      for (;;) {
        udp_fragment_prefix prefix;
        sockaddr_in from{};
        iovec iov[2] = {{&prefix, sizeof prefix},
                        {udp_landing(&asm_.a[0]), udp_landing_room(&asm_.a[0])}};
        msghdr msg{};
        msg.msg_name = &from;
        msg.msg_namelen = sizeof from;
        msg.msg_iov = iov;
        msg.msg_iovlen = 2;
        const ssize_t n = recvmsg(sock_, &msg, flags);
        if (n < 0) {
          if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
          fail("recv: %s", std::strerror(errno));
        }
        if (size_t(n) < sizeof prefix || (msg.msg_flags & MSG_TRUNC)) continue;  // not ours
        const uint64_t sender = (uint64_t(from.sin_addr.s_addr) << 16) | from.sin_port;
        const uint8_t *whole;
        if (udp_reassembler_add(&asm_, sender, &prefix, size_t(n) - sizeof prefix, &whole, &len)) {
          data = whole;
          return true;
        }
      }
    }
    void set_timeout(int64_t timeout_ns) {
      if (timeout_ns == timeout_ns_) return;  // the common case: no syscall
      timeval tv{};                           // 0: block without limit
      if (timeout_ns > 0) {
        tv = {timeout_ns / 1'000'000'000, (timeout_ns % 1'000'000'000) / 1000};
        if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
      }
      if (setsockopt(sock_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
        fail("SO_RCVTIMEO: %s", std::strerror(errno));
      timeout_ns_ = timeout_ns;
    }

    std::vector<uint8_t> buffers_[UDP_ASSEMBLIES];
    udp_reassembler asm_{};
    Socket sock_{udp_socket()};
    int64_t timeout_ns_ = -1;  // SO_RCVTIMEO in force; -1: none set yet
    // Last: destroyed first, it stops the listener (within kListenerSliceNs) before the
    // socket and buffers go.
    psb::sdk::ListenerThread thread_;
  };
};

}  // namespace

PSB_SDK_DRIVER(Udp)
