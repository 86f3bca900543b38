// The udp driver through its ABI table, plus the fragment reassembly it relies on.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <psbench/driver.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "test_config.hpp"
#include "test_received.hpp"

extern "C" {
#include "udp_reassembly.h"
}

namespace {

const psb_driver &udp() { return psb_test::driver_under_test(); }

struct UdpConfig {
  psb_config cfg{};
};

// The config is a base before Endpoints: it outlives the context Endpoints closes.
struct UdpRun : UdpConfig, psb_test::Endpoints {
  explicit UdpRun(uint32_t notify, uint64_t max_payload = 4u << 20) {
    cfg.run_id = "udptest";
    cfg.transport = "loopback";
    cfg.notify = notify;
    cfg.qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0};
    cfg.max_payload = max_payload;
    ctx = udp().open(&cfg, &err);
  }
};

std::vector<uint8_t> message(size_t size, uint8_t seed) {
  std::vector<uint8_t> m(size);
  for (size_t i = 0; i < size; ++i) m[i] = uint8_t(seed + i * 13);
  return m;
}

// Takes one message, waiting up to 2 s; empty on none.
std::vector<uint8_t> take_one(psb_reader *reader, int64_t timeout_ns) {
  return psb_test::take_one(reader, timeout_ns, 2);
}

}  // namespace

TEST(UdpDriver, WaitAndPollDeliverExactBytesUpToFourMiB) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    UdpRun run(notify);
    ASSERT_NE(run.ctx, nullptr) << run.err.message;
    run.reader = udp().create_reader(run.ctx, "psb_udptest_a", nullptr, nullptr, &run.err);
    run.writer = udp().create_writer(run.ctx, "psb_udptest_a", &run.err);
    ASSERT_TRUE(run.reader && run.writer) << run.err.message;
    for (size_t size :
         {size_t(32), size_t(65000), size_t(65001), size_t(1) << 20, size_t(4) << 20}) {
      auto sent = message(size, uint8_t(size));
      ASSERT_EQ(udp().write(run.writer, sent.data(), sent.size(), &run.err), 0) << run.err.message;
      auto got = take_one(run.reader, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0);
      ASSERT_EQ(got.size(), size);
      EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
    }
  }
}

TEST(UdpDriver, TakeReturnsNothingWhenNothingWasSent) {
  UdpRun run(PSB_NOTIFY_WAIT);
  run.reader = udp().create_reader(run.ctx, "psb_udptest_b", nullptr, nullptr, &run.err);
  ASSERT_NE(run.reader, nullptr) << run.err.message;
  psb_test::expect_nothing_to_take(run.reader, 10'000'000);
}

TEST(UdpDriver, ListenerGetsEveryMessageAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<size_t> sizes;
  } seen;
  UdpRun run(PSB_NOTIFY_LISTENER);
  auto cb = [](void *user, const void *, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::lock_guard lock(s->mu);
    s->sizes.push_back(len);
  };
  run.reader = udp().create_reader(run.ctx, "psb_udptest_c", cb, &seen, &run.err);
  run.writer = udp().create_writer(run.ctx, "psb_udptest_c", &run.err);
  ASSERT_TRUE(run.reader && run.writer) << run.err.message;
  for (size_t i = 0; i < 50; ++i) {
    auto m = message(100 + i, 1);
    ASSERT_EQ(udp().write(run.writer, m.data(), m.size(), &run.err), 0);
  }
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(seen.mu);
      if (seen.sizes.size() == 50) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  udp().destroy_reader(run.reader);
  run.reader = nullptr;
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.sizes.size(), 50u);
  EXPECT_EQ(seen.sizes[49], 149u);
}

TEST(UdpDriver, TwoReadersOfOneTopicCollideWithAClearError) {
  UdpRun run(PSB_NOTIFY_WAIT);
  run.reader = udp().create_reader(run.ctx, "psb_udptest_d", nullptr, nullptr, &run.err);
  ASSERT_NE(run.reader, nullptr);
  psb_error err{};
  EXPECT_EQ(udp().create_reader(run.ctx, "psb_udptest_d", nullptr, nullptr, &err), nullptr);
  EXPECT_NE(std::string(err.message).find("cannot bind"), std::string::npos) << err.message;
}

namespace {

struct Assembler {
  explicit Assembler(size_t capacity) : buffer(capacity + UDP_FRAGMENT_PAYLOAD) {
    r.buffer = buffer.data();
    r.capacity = capacity;
  }
  // Lands a fragment as the driver would and returns the completed length, or 0.
  size_t add(uint32_t id, uint32_t total, uint32_t offset, size_t n, uint8_t fill) {
    std::memset(udp_landing(&r), fill, n);
    udp_fragment_prefix p{id, total, offset};
    size_t len = 0;
    return udp_reassembly_add(&r, &p, n, &len) ? len : 0;
  }
  std::vector<uint8_t> buffer;
  udp_reassembly r{};
};

}  // namespace

TEST(UdpReassembly, InOrderFragmentsMakeOneMessage) {
  Assembler a(200000);
  EXPECT_EQ(a.add(1, 150000, 0, 65000, 0xA), 0u);
  EXPECT_EQ(a.add(1, 150000, 65000, 65000, 0xB), 0u);
  EXPECT_EQ(a.add(1, 150000, 130000, 20000, 0xC), 150000u);
  EXPECT_EQ(a.buffer[0], 0xA);
  EXPECT_EQ(a.buffer[65000], 0xB);
  EXPECT_EQ(a.buffer[149999], 0xC);
}

TEST(UdpReassembly, AMissingFragmentLosesOnlyThatMessage) {
  Assembler a(200000);
  EXPECT_EQ(a.add(1, 130000, 0, 65000, 0xA), 0u);
  // fragment 2 of message 1 is lost; message 2 starts and lands after the partial one
  EXPECT_EQ(a.add(2, 100, 0, 100, 0xD), 100u);
  EXPECT_EQ(a.buffer[0], 0xD);                         // moved to the start
  EXPECT_EQ(a.add(1, 130000, 65000, 65000, 0xB), 0u);  // stale fragment: dropped
}

TEST(UdpReassembly, RefusesMessagesOverCapacityAndOverlongFragments) {
  Assembler a(1000);
  EXPECT_EQ(a.add(1, 5000, 0, 1000, 0), 0u);
  EXPECT_EQ(a.add(2, 100, 50, 100, 0), 0u);  // offset + n beyond total
}

namespace {

// The reassembler as the driver uses it: every datagram lands in a[0].
struct Reassembler {
  explicit Reassembler(size_t capacity, unsigned count = UDP_ASSEMBLIES) {
    s.count = count;
    for (unsigned i = 0; i < count; ++i) {
      buffers.emplace_back(capacity + UDP_FRAGMENT_PAYLOAD);
      s.a[i].buffer = buffers.back().data();
      s.a[i].capacity = capacity;
    }
  }
  // Lands a fragment of `sender` and returns the completed message, or nothing.
  std::vector<uint8_t> add(uint64_t sender, uint32_t id, uint32_t total, uint32_t offset, size_t n,
                           uint8_t fill) {
    std::memset(udp_landing(&s.a[0]), fill, n);
    udp_fragment_prefix p{id, total, offset};
    const uint8_t *data = nullptr;
    size_t len = 0;
    if (!udp_reassembler_add(&s, sender, &p, n, &data, &len)) return {};
    return std::vector<uint8_t>(data, data + len);
  }
  std::vector<std::vector<uint8_t>> buffers;
  udp_reassembler s{};
};

std::vector<uint8_t> filled(std::initializer_list<std::pair<size_t, uint8_t>> runs) {
  std::vector<uint8_t> m;
  for (auto [n, fill] : runs) m.insert(m.end(), n, fill);
  return m;
}

}  // namespace

// Two writers' fragments interleave (both use message id 1, as two writers started
// together do): each message is assembled whole. With one assembly, as before, writer
// 9's first fragment and writer 7's second were spliced into one "message".
TEST(UdpReassembly, InterleavedMessagesOfTwoWritersBothArrive) {
  Reassembler r(200000);
  EXPECT_TRUE(r.add(7, 1, 130000, 0, 65000, 0xA1).empty());
  EXPECT_TRUE(r.add(9, 1, 100000, 0, 65000, 0xB1).empty());
  EXPECT_TRUE(r.add(7, 1, 130000, 65000, 65000, 0xA2) == filled({{65000, 0xA1}, {65000, 0xA2}}));
  EXPECT_TRUE(r.add(9, 1, 100000, 65000, 35000, 0xB2) == filled({{65000, 0xB1}, {35000, 0xB2}}));
  // a[0] is idle again, writer 9's next message starts there
  EXPECT_TRUE(r.add(9, 2, 100, 0, 100, 0xB3) == filled({{100, 0xB3}}));
  Reassembler one(200000, 1);
  EXPECT_TRUE(one.add(7, 1, 130000, 0, 65000, 0xA1).empty());
  EXPECT_TRUE(one.add(9, 1, 100000, 0, 65000, 0xB1).empty());
  const auto spliced = one.add(7, 1, 130000, 65000, 65000, 0xA2);
  ASSERT_EQ(spliced.size(), 100000u);
  EXPECT_EQ(spliced[0], 0xB1);
  EXPECT_EQ(spliced[65000], 0xA2);
}

// A writer whose message is assembled aside keeps it there while a[0] becomes idle.
TEST(UdpReassembly, AWritersMessageContinuesWhereItWasStarted) {
  Reassembler r(200000);
  EXPECT_TRUE(r.add(7, 1, 70000, 0, 65000, 0xA1).empty());
  EXPECT_TRUE(r.add(9, 4, 70000, 0, 65000, 0xB1).empty());          // aside
  EXPECT_EQ(r.add(7, 1, 70000, 65000, 5000, 0xA2).size(), 70000u);  // a[0] idle now
  EXPECT_TRUE(r.add(9, 4, 70000, 65000, 5000, 0xB2) == filled({{65000, 0xB1}, {5000, 0xB2}}));
}

// One writer more than there are assemblies: the oldest message aside is evicted (lost),
// the others arrive.
TEST(UdpReassembly, MoreInterleavingWritersThanAssembliesLoseOneMessage) {
  Reassembler r(200000);
  for (uint64_t w = 0; w <= UDP_ASSEMBLIES; ++w)
    EXPECT_TRUE(r.add(w, 1, 70000, 0, 65000, uint8_t(w)).empty());
  size_t whole = 0;
  for (uint64_t w = 0; w <= UDP_ASSEMBLIES; ++w)
    whole += r.add(w, 1, 70000, 65000, 5000, uint8_t(w)).size() == 70000u;
  EXPECT_EQ(whole, size_t(UDP_ASSEMBLIES));
}

// Through the driver: two writers of one topic send 200 KB messages from two threads at
// once (4 fragments each), 8 MB in all, which the 16 MiB receive buffer holds: every
// message arrives whole, whatever way their fragments interleaved.
TEST(UdpDriver, TwoWritersOfLargeMessagesBothArriveWhole) {
  UdpRun a(PSB_NOTIFY_WAIT, 200000), b(PSB_NOTIFY_WAIT, 200000);
  ASSERT_TRUE(a.ctx && b.ctx) << a.err.message << b.err.message;
  a.reader = udp().create_reader(a.ctx, "psb_udptest_two", nullptr, nullptr, &a.err);
  a.writer = udp().create_writer(a.ctx, "psb_udptest_two", &a.err);
  b.writer = udp().create_writer(b.ctx, "psb_udptest_two", &b.err);
  ASSERT_TRUE(a.reader && a.writer && b.writer) << a.err.message << b.err.message;
  constexpr int kEach = 20;
  auto send = [](psb_writer *w, uint8_t seed) {
    for (int i = 0; i < kEach; ++i) {
      auto m = message(200000, uint8_t(seed + i));
      psb_error err{};
      EXPECT_EQ(udp().write(w, m.data(), m.size(), &err), 0) << err.message;
    }
  };
  std::thread ta(send, a.writer, 0), tb(send, b.writer, 100);
  ta.join();
  tb.join();
  int whole = 0;
  for (std::vector<uint8_t> m; !(m = take_one(a.reader, 200'000'000)).empty();) {
    ASSERT_EQ(m.size(), 200000u);
    const uint8_t seed = m[0];
    EXPECT_TRUE(m == message(200000, seed)) << "seed " << int(seed);
    ++whole;
  }
  EXPECT_EQ(whole, 2 * kEach);
}

namespace {

// Forks a child that opens a writer with the given fault options and writes 5 times;
// returns its wait status.
int status_of_faulty_writer(const char *fault, const char *after) {
  pid_t pid = fork();
  if (pid == 0) {
    psb_option options[] = {{"fault", fault}, {"fault_after", after}};
    UdpRun run(PSB_NOTIFY_WAIT);
    run.cfg.options = options;
    run.cfg.option_count = 2;
    psb_context *ctx = udp().open(&run.cfg, &run.err);
    psb_writer *w = ctx ? udp().create_writer(ctx, "psb_udptest_fault", &run.err) : nullptr;
    if (!w) _exit(99);
    uint8_t msg[64] = {};
    for (int i = 0; i < 5; ++i) udp().write(w, msg, sizeof msg, &run.err);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST(UdpFaultInjection, CrashesOrExitsAtTheNthWrite) {
  int crashed = status_of_faulty_writer("crash", "3");
  ASSERT_TRUE(WIFSIGNALED(crashed));
  EXPECT_EQ(WTERMSIG(crashed), SIGABRT);
  int exited = status_of_faulty_writer("exit", "3");
  ASSERT_TRUE(WIFEXITED(exited));
  EXPECT_EQ(WEXITSTATUS(exited), 7);
  int never = status_of_faulty_writer("exit", "6");  // only 5 writes: no fault
  ASSERT_TRUE(WIFEXITED(never));
  EXPECT_EQ(WEXITSTATUS(never), 0);
}

TEST(UdpFaultInjection, BadFaultOptionsAreRefused) {
  UdpRun run(PSB_NOTIFY_WAIT);
  psb_option bogus[] = {{"fault", "melt"}, {"fault_after", "1"}};
  run.cfg.options = bogus;
  run.cfg.option_count = 2;
  psb_error err{};
  EXPECT_NE(psb_test::check(udp(), &run.cfg, &err), 0);
  EXPECT_NE(std::string(err.message).find("crash|hang|exit"), std::string::npos) << err.message;
  psb_option no_count[] = {{"fault", "crash"}};
  run.cfg.options = no_count;
  run.cfg.option_count = 1;
  EXPECT_NE(psb_test::check(udp(), &run.cfg, &err), 0);
  EXPECT_NE(std::string(err.message).find("fault_after"), std::string::npos) << err.message;
}

namespace {

std::vector<std::pair<std::string, std::string>> refusals_of(const psb_config &cfg) {
  return psb_test::refusals(udp(), cfg);
}

// A topic of its own per test process, so parallel runs of this test never share a port.
std::string own_topic(const char *suffix) {
  return "psb_udptest" + std::to_string(getpid()) + "_" + suffix;
}

}  // namespace

TEST(UdpHosts, OnlyLoopbackStaysOnOneHostAndEveryRefusalSaysTheFix) {
  EXPECT_EQ(udp().caps.crosses_hosts, 1u);
  const char *const peers[] = {"198.18.0.2", nullptr};
  const char *const none[] = {nullptr};
  const char *const bad[] = {"198.18.0", nullptr};
  struct Case {
    const char *transport, *local;
    const char *const *peers;
    std::vector<psb_option> options;
    const char *setting, *expect;  // nullptr: accepted
  };
  const Case cases[] = {
      {"loopback", "198.18.0.1", peers, {}, "hosts", "--transport unicast"},
      {"unicast", "198.18.0.1", peers, {}, nullptr, nullptr},
      {"unicast", "198.18.0.1", none, {{"peer", "198.18.0.9"}}, nullptr, nullptr},
      {"unicast", "198.18.0.1", none, {}, "hosts", "--peer ADDRESS"},
      {"unicast", "198.18.0.1", bad, {}, "hosts", "('198.18.0' is not)"},
      {"unicast", "localhost", peers, {}, "hosts", "('localhost' is not)"},
      {"multicast", "198.18.0.1", peers, {}, nullptr, nullptr},
      {"multicast", nullptr, nullptr, {}, nullptr, nullptr},
      {"multicast",
       nullptr,
       nullptr,
       {{"peer", "198.18.0.9"}},
       "option:peer",
       "interface of --address"},
      // broadcast: accepted by check() whatever the interfaces here (open() looks them up).
      {"broadcast", "198.18.0.1", peers, {}, nullptr, nullptr},
      {"broadcast",
       nullptr,
       nullptr,
       {{"bind", "127.0.0.1"}},
       "option:bind",
       "interface of --address"},
  };
  for (const Case &c : cases) {
    UdpRun run(PSB_NOTIFY_WAIT);
    run.cfg.transport = c.transport;
    run.cfg.local_address = c.local;
    run.cfg.peer_addresses = c.peers;
    run.cfg.options = c.options.data();
    run.cfg.option_count = c.options.size();
    auto got = refusals_of(run.cfg);
    if (c.setting == nullptr) {
      EXPECT_TRUE(got.empty()) << c.transport << ": " << (got.empty() ? "" : got[0].second);
      continue;
    }
    ASSERT_EQ(got.size(), 1u) << c.transport;
    EXPECT_EQ(got[0].first, c.setting) << got[0].second;
    EXPECT_NE(got[0].second.find(c.expect), std::string::npos) << got[0].second;
    EXPECT_EQ(got[0].second.rfind("udp: ", 0), 0u) << got[0].second;
    psb_error err{};
    EXPECT_EQ(udp().open(&run.cfg, &err), nullptr) << "open accepted what check refused";
  }
  // broadcast: open() needs an interface of --address here; this host has no 198.18.0.77.
  UdpRun run(PSB_NOTIFY_WAIT);
  run.cfg.transport = "broadcast";
  run.cfg.local_address = "198.18.0.77";
  run.cfg.peer_addresses = peers;
  psb_error err{};
  EXPECT_EQ(udp().open(&run.cfg, &err), nullptr);
  EXPECT_NE(std::string(err.message).find("no interface here has address 198.18.0.77"),
            std::string::npos)
      << err.message;
}

TEST(UdpHosts, MulticastOnOneHostReachesEveryReaderOfTheTopic) {
  UdpRun run(PSB_NOTIFY_WAIT);
  run.cfg.transport = "multicast";
  UdpRun other(PSB_NOTIFY_POLL);  // a second process of the run, as another subscriber
  other.cfg.transport = "multicast";
  psb_error err{};
  run.ctx = udp().open(&run.cfg, &err);
  other.ctx = udp().open(&other.cfg, &err);
  ASSERT_TRUE(run.ctx && other.ctx) << err.message;
  const std::string topic = own_topic("mc");
  run.reader = udp().create_reader(run.ctx, topic.c_str(), nullptr, nullptr, &err);
  ASSERT_NE(run.reader, nullptr) << err.message;
  other.reader = udp().create_reader(other.ctx, topic.c_str(), nullptr, nullptr, &err);
  ASSERT_NE(other.reader, nullptr) << err.message;
  run.writer = udp().create_writer(run.ctx, topic.c_str(), &err);
  ASSERT_NE(run.writer, nullptr) << err.message;
  for (size_t size : {size_t(32), size_t(200000)}) {  // one datagram, and fragments
    auto sent = message(size, uint8_t(size));
    ASSERT_EQ(udp().write(run.writer, sent.data(), sent.size(), &err), 0) << err.message;
    EXPECT_EQ(take_one(run.reader, 100'000'000), sent) << size;
    EXPECT_EQ(take_one(other.reader, 0), sent) << size;
  }
  // Another run's group: nothing of this one arrives.
  UdpRun stranger(PSB_NOTIFY_WAIT);
  stranger.cfg.transport = "multicast";
  stranger.cfg.run_id = "udpstranger";
  stranger.ctx = udp().open(&stranger.cfg, &err);
  ASSERT_NE(stranger.ctx, nullptr) << err.message;
  stranger.reader = udp().create_reader(stranger.ctx, topic.c_str(), nullptr, nullptr, &err);
  ASSERT_NE(stranger.reader, nullptr) << err.message;
  auto m = message(64, 9);
  ASSERT_EQ(udp().write(run.writer, m.data(), m.size(), &err), 0) << err.message;
  EXPECT_EQ(take_one(run.reader, 100'000'000), m);
  const void *data;
  size_t len;
  EXPECT_EQ(udp().take(stranger.reader, 50'000'000, &data, &len, &err), 0);
}

TEST(UdpHosts, UnicastAcrossHostsSendsEveryMessageToEveryPeer) {
  // Hosts on one machine: readers in "hosts" 127.0.0.2 and 127.0.0.3 (each binds its own
  // address), the writer's peers those two and 127.0.0.4, where nobody reads: its "port
  // unreachable" fails no write.
  const char *const peers[] = {"127.0.0.4", "127.0.0.2", "127.0.0.3", nullptr};
  const std::string topic = own_topic("uc");
  UdpRun w(PSB_NOTIFY_WAIT), r2(PSB_NOTIFY_WAIT), r3(PSB_NOTIFY_WAIT);
  psb_error err{};
  for (auto [run, local] : {std::pair{&w, "127.0.0.1"}, {&r2, "127.0.0.2"}, {&r3, "127.0.0.3"}}) {
    run->cfg.transport = "unicast";
    run->cfg.local_address = local;
    run->cfg.peer_addresses = peers;
    run->ctx = udp().open(&run->cfg, &err);
    ASSERT_NE(run->ctx, nullptr) << err.message;
  }
  r2.reader = udp().create_reader(r2.ctx, topic.c_str(), nullptr, nullptr, &err);
  r3.reader = udp().create_reader(r3.ctx, topic.c_str(), nullptr, nullptr, &err);
  w.writer = udp().create_writer(w.ctx, topic.c_str(), &err);
  ASSERT_TRUE(r2.reader && r3.reader && w.writer) << err.message;
  for (uint8_t i = 0; i < 20; ++i) {
    auto sent = message(i % 2 ? 100000 : 64, i);
    ASSERT_EQ(udp().write(w.writer, sent.data(), sent.size(), &err), 0) << int(i) << err.message;
    EXPECT_EQ(take_one(r2.reader, 100'000'000), sent) << int(i);
    EXPECT_EQ(take_one(r3.reader, 100'000'000), sent) << int(i);
  }
}
