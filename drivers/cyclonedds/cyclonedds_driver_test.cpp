// The cyclonedds driver through its ABI table only: the built .so is loaded with
// dlopen, as psbench-node does. No timing assertions: waits have generous bounds only
// so that a bug fails instead of hanging. Run with --echo-child ... this binary is the
// peer process of the inter-process test (it must start before Cyclone does, so it is
// a fresh exec, not a fork); with --reader-child ... it is the reader the drain and
// counter tests stop and resume (within one process Cyclone delivers locally, so
// neither acknowledgements nor loss on a transport can be seen there).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_across_hosts.hpp"
#include "test_config.hpp"
#include "test_process.hpp"
#include "test_received.hpp"
#include "test_stopped_reader.hpp"

extern char **environ;

namespace {

const char *const g_self = "/proc/self/exe";  // this binary, for the echo child

const psb_driver &drv() { return psb_test::driver_under_test(); }

// A psb_config that owns its strings: udp, reliable, 64 B unless the test says.
struct Cfg : psb_test::OwnedConfig {
  explicit Cfg(uint32_t notify = PSB_NOTIFY_WAIT, uint64_t max_payload = 64)
      : OwnedConfig(psb_test::fresh_run_id("cyct"), "udp", max_payload, notify) {}
  Cfg &option(const std::string &k, const std::string &v) {
    OwnedConfig::option(k, v);
    return *this;
  }
};

// One context with at most one writer and one reader, freed in the safe order.
struct Side {
  explicit Side(Cfg &cfg) {
    ctx = drv().open(cfg.get(), &err);
    topic_prefix = "psb_" + cfg.run_id + "_";
  }
  ~Side() {
    if (reader) drv().destroy_reader(reader);
    if (writer) drv().destroy_writer(writer);
    if (ctx) drv().close(ctx);
  }
  bool add_writer(const char *suffix) {
    writer = drv().create_writer(ctx, (topic_prefix + suffix).c_str(), &err);
    return writer != nullptr;
  }
  bool add_reader(const char *suffix, psb_on_data cb = nullptr, void *user = nullptr) {
    reader = drv().create_reader(ctx, (topic_prefix + suffix).c_str(), cb, user, &err);
    return reader != nullptr;
  }
  psb_error err{};
  std::string topic_prefix;
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
};

bool eventually(const std::function<bool()> &cond, int seconds = 10) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A message as the node builds one: 32-byte header (seq first, flags last, 0), then a
// pattern; the other header bytes carry the pattern too.
std::vector<uint8_t> message(size_t size, uint64_t seq) {
  std::vector<uint8_t> m(size);
  for (size_t i = 0; i < size; ++i) m[i] = uint8_t(seq * 7 + i * 13);
  std::memcpy(m.data(), &seq, sizeof seq);
  const uint32_t flags = 0;
  std::memcpy(m.data() + 28, &flags, sizeof flags);
  return m;
}

uint64_t seq_of(const std::vector<uint8_t> &m) {
  uint64_t seq = ~0ull;
  if (m.size() >= 8) std::memcpy(&seq, m.data(), sizeof seq);
  return seq;
}

// Takes one message within 5 s; empty on none. Fails the test on a driver error.
std::vector<uint8_t> take_one(psb_reader *reader, uint32_t notify = PSB_NOTIFY_WAIT) {
  const void *data;
  size_t len;
  psb_error err{};
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
    int r = drv().take(reader, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0, &data, &len, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r < 0) return {};
    if (r == 1)
      return std::vector<uint8_t>(static_cast<const uint8_t *>(data),
                                  static_cast<const uint8_t *>(data) + len);
  }
  return {};
}

bool wait_matched(Side &w, Side &r) {
  return eventually(
      [&] { return drv().matched_readers(w.writer) >= 1 && drv().matched_writers(r.reader) >= 1; });
}

// --- the echo child: takes on <run>_ping and writes every message back on <run>_pong
// until a message with flag 4 (end) arrives or nothing comes for 10 s.
int echo_child(const char *run_id, const char *transport, uint64_t max_payload) {
  Cfg cfg(PSB_NOTIFY_WAIT, max_payload);
  cfg.run_id = run_id;
  cfg.transport = transport;
  Side s(cfg);
  if (!s.ctx || !s.add_writer("pong") || !s.add_reader("ping")) {
    std::fprintf(stderr, "echo child: %s\n", s.err.message);
    return 1;
  }
  auto idle_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < idle_end) {
    const void *data;
    size_t len;
    int r = drv().take(s.reader, 100'000'000, &data, &len, &s.err);
    if (r < 0) return 1;
    if (r == 0) continue;
    uint32_t flags;
    std::memcpy(&flags, static_cast<const uint8_t *>(data) + 28, sizeof flags);
    if (flags & 4) return 0;
    if (drv().write(s.writer, data, len, &s.err) != 0) return 1;
    idle_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  }
  return 2;
}

}  // namespace

TEST(CycloneddsDriver, DescribesItself) {
  const psb_driver &d = drv();
  EXPECT_STREQ(d.name, "cyclonedds");
  EXPECT_EQ(std::string(d.version()).rfind("0.10", 0), 0u) << d.version();
  EXPECT_STREQ(d.caps.transports[0], "udp");
}

TEST(CycloneddsDriver, BytesOfSeveralSizesArriveIntactInEachMode) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Cfg cfg(notify, 4u << 20);
    Side w(cfg), r(cfg);
    ASSERT_TRUE(w.ctx && r.ctx) << w.err.message << r.err.message;
    ASSERT_TRUE(r.add_reader("a") && w.add_writer("a")) << r.err.message << w.err.message;
    ASSERT_TRUE(wait_matched(w, r));
    uint64_t seq = 0;
    for (size_t size : {size_t(32), size_t(33), size_t(64), size_t(16384), size_t(65536),
                        size_t(1) << 20, size_t(4) << 20}) {
      auto sent = message(size, seq++);
      ASSERT_EQ(drv().write(w.writer, sent.data(), sent.size(), &w.err), 0) << w.err.message;
      auto got = take_one(r.reader, notify);
      ASSERT_EQ(got.size(), size);
      EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
    }
  }
}

TEST(CycloneddsDriver, BytesCrossProcessesIntactUpToFourMiB) {
  Cfg cfg(PSB_NOTIFY_WAIT, 4u << 20);
  Side me(cfg);
  ASSERT_TRUE(me.ctx && me.add_writer("ping") && me.add_reader("pong")) << me.err.message;
  const std::string max = std::to_string(cfg.c.max_payload);
  const char *argv[] = {g_self, "--echo-child", cfg.run_id.c_str(), "udp", max.c_str(), nullptr};
  pid_t child;
  ASSERT_EQ(posix_spawn(&child, g_self, nullptr, nullptr, const_cast<char **>(argv), environ), 0);
  ASSERT_TRUE(wait_matched(me, me)) << "the echo child never matched";
  uint64_t seq = 0;
  for (size_t size :
       {size_t(32), size_t(100), size_t(16384), size_t(65537), size_t(1) << 20, size_t(4) << 20}) {
    auto sent = message(size, seq++);
    ASSERT_EQ(drv().write(me.writer, sent.data(), sent.size(), &me.err), 0) << me.err.message;
    auto got = take_one(me.reader);
    ASSERT_EQ(got.size(), size);
    EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
  }
  auto end = message(32, 0);
  uint32_t end_flag = 4;
  std::memcpy(end.data() + 28, &end_flag, 4);
  ASSERT_EQ(drv().write(me.writer, end.data(), end.size(), &me.err), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "echo child status " << status;
}

TEST(CycloneddsDriver, ComplexCarriesTheHeaderAndItsShape) {
  for (const char *elements : {"1", "16", "1000"}) {
    Cfg cfg(PSB_NOTIFY_WAIT, 32);
    cfg.option("type", "complex").option("elements", elements);
    Side w(cfg), r(cfg);
    ASSERT_TRUE(r.ctx && r.add_reader("c") && w.add_writer("c")) << r.err.message << w.err.message;
    ASSERT_TRUE(wait_matched(w, r));
    for (uint64_t seq = 0; seq < 3; ++seq) {
      auto sent = message(32, seq);
      ASSERT_EQ(drv().write(w.writer, sent.data(), sent.size(), &w.err), 0) << w.err.message;
      auto got = take_one(r.reader);
      ASSERT_EQ(got.size(), 32u) << "elements " << elements;
      EXPECT_TRUE(got == sent) << "header differs, elements " << elements;
    }
  }
}

TEST(CycloneddsDriver, ComplexOfAnotherShapeIsAnError) {
  Cfg wcfg(PSB_NOTIFY_WAIT, 32), rcfg(PSB_NOTIFY_WAIT, 32);
  wcfg.option("type", "complex").option("elements", "8");
  rcfg.run_id = wcfg.run_id;
  rcfg.option("type", "complex").option("elements", "16");
  Side w(wcfg), r(rcfg);
  ASSERT_TRUE(r.ctx && r.add_reader("c") && w.add_writer("c")) << r.err.message << w.err.message;
  ASSERT_TRUE(wait_matched(w, r));
  auto sent = message(32, 1);
  ASSERT_EQ(drv().write(w.writer, sent.data(), sent.size(), &w.err), 0);
  const void *data;
  size_t len;
  psb_error err{};
  int got = 0;
  ASSERT_TRUE(
      eventually([&] { return (got = drv().take(r.reader, 10'000'000, &data, &len, &err)) != 0; }));
  EXPECT_EQ(got, -1);
  EXPECT_NE(std::string(err.message).find("has 8 outer elements, expected 16"), std::string::npos)
      << err.message;
}

TEST(CycloneddsDriver, LateJoinerGetsTheLastNOfTransientLocalKeepLastN) {
  Cfg cfg(PSB_NOTIFY_WAIT, 64);
  cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 5};
  Side w(cfg);
  ASSERT_TRUE(w.ctx && w.add_writer("tl")) << w.err.message;
  for (uint64_t seq = 0; seq < 12; ++seq) {
    auto m = message(64, seq);
    ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
  Side r(cfg);  // joins after the writes
  ASSERT_TRUE(r.ctx && r.add_reader("tl")) << r.err.message;
  std::vector<uint64_t> seqs;
  for (int i = 0; i < 5; ++i) {
    auto got = take_one(r.reader);
    if (got.empty()) break;
    seqs.push_back(seq_of(got));
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>{7, 8, 9, 10, 11}));
  const void *data;
  size_t len;
  EXPECT_EQ(drv().take(r.reader, 50'000'000, &data, &len, &r.err), 0)
      << "more than the last 5 arrived";
}

// Cyclone hands a late joiner its history while dds_create_reader runs; the listener
// must deliver it like any other sample.
TEST(CycloneddsDriver, ListeningLateJoinerGetsTheHistoryToo) {
  struct Seen {
    std::mutex mu;
    std::vector<uint64_t> seqs;
  } seen;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::vector<uint8_t> m(static_cast<const uint8_t *>(data),
                           static_cast<const uint8_t *>(data) + len);
    std::lock_guard lock(s->mu);
    s->seqs.push_back(seq_of(m));
  };
  Cfg cfg(PSB_NOTIFY_LISTENER, 64);
  cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 5};
  Side w(cfg);
  ASSERT_TRUE(w.ctx && w.add_writer("tll")) << w.err.message;
  for (uint64_t seq = 0; seq < 12; ++seq) {
    auto m = message(64, seq);
    ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
  Side r(cfg);
  ASSERT_TRUE(r.ctx && r.add_reader("tll", cb, &seen)) << r.err.message;
  EXPECT_TRUE(eventually(
      [&] {
        std::lock_guard lock(seen.mu);
        return seen.seqs.size() >= 5;
      },
      5));
  std::lock_guard lock(seen.mu);
  EXPECT_EQ(seen.seqs, (std::vector<uint64_t>{7, 8, 9, 10, 11}));
}

TEST(CycloneddsDriver, VolatileLateJoinerGetsNothingOld) {
  Cfg cfg(PSB_NOTIFY_WAIT, 64);
  cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 5};
  Side w(cfg);
  ASSERT_TRUE(w.ctx && w.add_writer("v")) << w.err.message;
  for (uint64_t seq = 0; seq < 3; ++seq) {
    auto m = message(64, seq);
    ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0);
  }
  Side r(cfg);
  ASSERT_TRUE(r.ctx && r.add_reader("v")) << r.err.message;
  ASSERT_TRUE(wait_matched(w, r));
  auto m = message(64, 3);
  ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0);
  EXPECT_EQ(seq_of(take_one(r.reader)), 3u);
}

TEST(CycloneddsDriver, MatchedCountsFollowTheEndpoints) {
  Cfg cfg;
  Side w(cfg), r(cfg);
  ASSERT_TRUE(w.ctx && w.add_writer("m")) << w.err.message;
  EXPECT_EQ(drv().matched_readers(w.writer), 0);
  ASSERT_TRUE(r.add_reader("m")) << r.err.message;
  EXPECT_TRUE(eventually([&] { return drv().matched_readers(w.writer) == 1; }));
  EXPECT_TRUE(eventually([&] { return drv().matched_writers(r.reader) == 1; }));
  drv().destroy_reader(r.reader);
  r.reader = nullptr;
  EXPECT_TRUE(eventually([&] { return drv().matched_readers(w.writer) == 0; }));
}

TEST(CycloneddsDriver, ListenerGetsEverySampleAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<uint64_t> seqs;
    std::atomic<int> calls{0};
  } seen;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::vector<uint8_t> m(static_cast<const uint8_t *>(data),
                           static_cast<const uint8_t *>(data) + len);
    std::lock_guard lock(s->mu);
    s->seqs.push_back(seq_of(m));
    s->calls++;
  };
  Cfg cfg(PSB_NOTIFY_LISTENER, 1024);
  cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0};
  Side w(cfg), r(cfg);
  ASSERT_TRUE(r.ctx && r.add_reader("l", cb, &seen) && w.add_writer("l"))
      << r.err.message << w.err.message;
  ASSERT_TRUE(wait_matched(w, r));
  for (uint64_t seq = 0; seq < 200; ++seq) {
    auto m = message(100 + seq, seq);
    ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
  EXPECT_TRUE(eventually([&] { return seen.calls.load() == 200; }));
  drv().destroy_reader(r.reader);
  r.reader = nullptr;
  const int after_destroy = seen.calls.load();
  auto m = message(64, 999);
  ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(seen.calls.load(), after_destroy) << "a callback after destroy_reader";
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.seqs.size(), 200u);
  for (uint64_t i = 0; i < 200; ++i) EXPECT_EQ(seen.seqs[i], i);
}

TEST(CycloneddsDriver, TakeReturnsNothingWhenNothingWasSent) {
  Cfg cfg;
  Side r(cfg);
  ASSERT_TRUE(r.ctx && r.add_reader("n")) << r.err.message;
  const void *data;
  size_t len;
  EXPECT_EQ(drv().take(r.reader, 10'000'000, &data, &len, &r.err), 0);
  EXPECT_EQ(drv().take(r.reader, 0, &data, &len, &r.err), 0);
}

namespace {

std::string refusal(Cfg &cfg) {
  psb_error err{};
  if (psb_test::check(drv(), cfg.get(), &err) == 0) return "accepted";
  return err.message;
}

bool roudi_running() { return system("pgrep -x iox-roudi > /dev/null") == 0; }

}  // namespace

TEST(CycloneddsDriver, RefusesWhatItCannotHonourWithTheDocumentedMessage) {
  {
    Cfg cfg(PSB_NOTIFY_WAIT, 64);
    cfg.option("type", "complex");
    EXPECT_EQ(refusal(cfg),
              "cyclonedds: type complex is sized by option elements=N; use --size 32");
  }
  {
    Cfg cfg;
    cfg.option("cyclonedds_uri", "<CycloneDDS/>");
    EXPECT_NE(refusal(cfg).find(
                  "option cyclonedds_uri is a vendor configuration; it needs --transport config"),
              std::string::npos);
  }
  {
    Cfg cfg;
    cfg.transport = "config";
    EXPECT_NE(refusal(cfg).find("transport config needs option cyclonedds_uri=VALUE"),
              std::string::npos);
  }
  {
    Cfg cfg;
    cfg.option("type", "float");
    EXPECT_NE(refusal(cfg).find("option type='float' is not known"), std::string::npos);
  }
  {
    Cfg cfg;
    cfg.option("elements", "4");
    EXPECT_NE(refusal(cfg).find("option elements applies to type=complex only"), std::string::npos);
  }
  {
    Cfg cfg(PSB_NOTIFY_WAIT, 32);
    cfg.option("type", "complex").option("elements", "0");
    EXPECT_NE(refusal(cfg).find("option elements='0'"), std::string::npos);
  }
  {
    Cfg cfg;
    cfg.c.qos = psb_qos{PSB_BEST_EFFORT, PSB_TRANSIENT_LOCAL, 0, 0};
    EXPECT_NE(refusal(cfg).find("durability transient_local needs --reliability reliable"),
              std::string::npos);
  }
  {
    Cfg cfg;
    cfg.option("write_batch", "yes");
    EXPECT_NE(
        refusal(cfg).find("option write_batch='yes': use write_batch=true or write_batch=false"),
        std::string::npos);
  }
  {
    Cfg cfg;
    cfg.transport = "config";
    cfg.option("cyclonedds_uri", "<CycloneDDS/>").option("write_batch", "true");
    EXPECT_NE(refusal(cfg).find("option write_batch does not apply to transport config"),
              std::string::npos);
  }
  {
    Cfg cfg;
    cfg.option("domain_id", "231");
    EXPECT_NE(refusal(cfg).find("option domain_id='231'"), std::string::npos);
  }
  {
    Cfg cfg;
    cfg.transport = "shm";
    cfg.c.qos.history = PSB_KEEP_ALL;
    EXPECT_NE(refusal(cfg).find("transport shm cannot keep_all"), std::string::npos);
  }
  {
    Cfg cfg;
    cfg.transport = "shm";
    cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 1000};
    EXPECT_NE(refusal(cfg).find("transport shm keeps at most"), std::string::npos);
  }
  {
    Cfg cfg(PSB_NOTIFY_WAIT, 4u << 20);
    cfg.transport = "shm";
    EXPECT_NE(refusal(cfg).find("transport shm carries messages up to 4194236 bytes"),
              std::string::npos);
  }
  {
    Cfg cfg(PSB_NOTIFY_WAIT, 32);
    cfg.transport = "shm";
    cfg.option("type", "complex").option("elements", "40000");
    EXPECT_NE(refusal(cfg).find("transport shm carries complex samples up to 34951 elements"),
              std::string::npos);
  }
  if (!roudi_running()) {
    Cfg cfg;
    cfg.transport = "shm";
    EXPECT_EQ(refusal(cfg),
              "cyclonedds: transport shm needs iceoryx's RouDi daemon: start iox-roudi first");
  }
}

// ABI 6: across hosts (local_address set), udp and multicast move to the interface of
// local_address. Here that is lo's 127.0.0.1, so that one process can show that Cyclone
// takes the configuration the driver makes of it and delivers over it; real crossings
// (two emulated hosts) are in tests/test_cross_hosts_dds.py.
TEST(CycloneddsDriver, AcrossHostsUdpAndMulticastUseTheInterfaceOfTheLocalAddress) {
  for (const char *transport : {"udp", "multicast"}) {
    Cfg cfg;
    cfg.transport = transport;
    psb_test::expect_delivery_across_hosts_on_loopback(cfg);
  }
}

// Across hosts, a vendor configuration is the user's: accepted, its XML chooses the
// interface (shm and malformed addresses: the conformance suite's
// AcrossHostsShmAndMalformedAddressesAreRefused).
TEST(CycloneddsDriver, AcrossHostsAVendorConfigurationIsAccepted) {
  const char *const peers[] = {"198.18.0.2", nullptr};
  Cfg cfg;
  cfg.transport = "config";
  cfg.option("cyclonedds_uri", "<CycloneDDS/>");
  cfg.c.local_address = "198.18.0.1";
  cfg.c.peer_addresses = peers;
  EXPECT_EQ(refusal(cfg), "accepted");
}

TEST(CycloneddsDriver, VendorConfigurationIsUsedAsGiven) {
  Cfg good;
  good.transport = "config";
  good.option(
      "cyclonedds_uri",
      "<CycloneDDS><Domain id=\"any\"><General><Interfaces><NetworkInterface name=\"lo\" "
      "multicast=\"false\"/></Interfaces><AllowMulticast>false</AllowMulticast></General>"
      "<Discovery><ParticipantIndex>auto</ParticipantIndex></Discovery></Domain></CycloneDDS>");
  EXPECT_EQ(refusal(good), "accepted");
  Side ok(good);
  EXPECT_NE(ok.ctx, nullptr) << ok.err.message;

  Cfg bad;
  bad.transport = "config";
  bad.option("cyclonedds_uri",
             "<CycloneDDS><Domain id=\"any\"><NoSuchElement/></Domain></CycloneDDS>");
  Side refused(bad);
  EXPECT_EQ(refused.ctx, nullptr);
  EXPECT_NE(std::string(refused.err.message).find("cannot create domain"), std::string::npos)
      << refused.err.message;
}

TEST(CycloneddsDriver, ContextsOfOneDomainMustShareItsConfiguration) {
  Cfg udp;
  udp.option("domain_id", "222");
  Cfg multicast;
  multicast.transport = "multicast";
  multicast.option("domain_id", "222");
  Side a(udp), b(udp), c(multicast);
  EXPECT_NE(a.ctx, nullptr) << a.err.message;
  EXPECT_NE(b.ctx, nullptr) << b.err.message;  // same configuration: shares the domain
  EXPECT_EQ(c.ctx, nullptr);
  EXPECT_NE(std::string(c.err.message)
                .find("domain 222 is already open in this process with another configuration"),
            std::string::npos)
      << c.err.message;
}

// --- ABI 4: drain and counters ---------------------------------------------------

namespace {

constexpr const char *kChildTopic = "child";

// What the driver's writer_counters() or reader_counters() hands over.
template <class Endpoint>
std::map<std::string, uint64_t> counters_of(Endpoint *endpoint) {
  return psb_test::counters_of(drv(), endpoint);
}

// This binary run as `--reader-child RUN RELIABILITY HISTORY DEPTH`: a wait-mode reader
// on <run>_child over udp prints "matched" once it sees a writer, takes until a message
// with flag 4 (end) or 10 s without any, then prints "received N", "last_seq S" (the
// sequence number of the last message before the end, when there was one) and each of
// its counters as "NAME VALUE". Every wait is bounded.
int reader_child(char **argv) {
  Cfg cfg;
  cfg.run_id = argv[0];
  cfg.c.qos = psb_qos{uint32_t(std::atoi(argv[1])), PSB_VOLATILE, uint32_t(std::atoi(argv[2])),
                      uint32_t(std::atoi(argv[3]))};
  Side s(cfg);
  if (!s.ctx || !s.add_reader(kChildTopic)) {
    std::fprintf(stderr, "reader child: %s\n", s.err.message);
    return 1;
  }
  if (!eventually([&] { return drv().matched_writers(s.reader) >= 1; }, 20)) return 2;
  std::printf("matched\n");
  std::fflush(stdout);
  return psb_test::report_until_end(drv(), s.reader, &s.err);
}

// A reader child: this binary with --reader-child and the configuration's QoS.
bool start_reader_child(psb_test::ChildReport &child, const Cfg &cfg) {
  return child.start({"--reader-child", cfg.run_id, std::to_string(cfg.c.qos.reliability),
                      std::to_string(cfg.c.qos.history), std::to_string(cfg.c.qos.history_depth)});
}

void write_n(Side &w, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const auto m = message(64, i);
    ASSERT_EQ(drv().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
}

std::vector<uint8_t> end_message() { return psb_test::as_end_marker(message(64, ~0ull)); }

// Writes the end marker on w's writer: the write's result (0: written).
int write_end(Side &w) {
  const auto end = end_message();
  return drv().write(w.writer, end.data(), end.size(), &w.err);
}

// Starts the child, a writer on its topic, waits until both matched, then sends one
// message and drains it: a reliable Cyclone writer does not wait for a reader that
// has not yet answered a heartbeat, so drain proves nothing until it has once.
void start_pair(Cfg &cfg, psb_test::ChildReport &child, Side &w) {
  ASSERT_TRUE(start_reader_child(child, cfg));
  ASSERT_TRUE(w.ctx && w.add_writer(kChildTopic)) << w.err.message;
  ASSERT_EQ(child.line(), "matched");
  ASSERT_TRUE(eventually([&] { return drv().matched_readers(w.writer) >= 1; }));
  const auto first = message(64, 1'000'000);
  ASSERT_EQ(drv().write(w.writer, first.data(), first.size(), &w.err), 0) << w.err.message;
  ASSERT_EQ(drv().drain(w.writer, 20'000'000'000, &w.err), 1) << w.err.message;
}

}  // namespace

// A reader in a stopped process acknowledges nothing: drain times out (0) while it is
// stopped and returns drained (1) once it runs again; it then has every sample. 100
// samples: Cyclone's writer history starts with a 30 kB high-water mark (WhcHighInit)
// and blocks writes beyond it until acknowledgements raise it (seen: 163 of 200).
TEST(CycloneddsDriver, DrainTimesOutWhileTheReaderIsStoppedAndDrainsWhenItRuns) {
  for (const bool batch : {false, true}) {
    Cfg cfg;
    cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0};
    if (batch) cfg.option("write_batch", "true");  // drain must flush the batch first
    psb_test::ChildReport child;
    Side w(cfg);
    start_pair(cfg, child, w);
    ASSERT_EQ(kill(child.pid, SIGSTOP), 0);
    write_n(w, 100);
    EXPECT_EQ(drv().drain(w.writer, 1'000'000, &w.err), 0) << w.err.message;
    ASSERT_EQ(kill(child.pid, SIGCONT), 0);
    EXPECT_EQ(drv().drain(w.writer, 20'000'000'000, &w.err), 1) << w.err.message;
    const auto end = end_message();
    ASSERT_EQ(drv().write(w.writer, end.data(), end.size(), &w.err), 0);
    ASSERT_EQ(drv().drain(w.writer, 20'000'000'000, &w.err), 1)
        << w.err.message;  // sends the batch
    auto got = child.finish();
    EXPECT_EQ(got["exit"], 0u) << "batch " << batch;
    EXPECT_EQ(got["received"], 101u) << "batch " << batch;  // with start_pair's
    EXPECT_EQ(got["sample_lost"], 0u) << "batch " << batch;
  }
}

// Reliable keep_last:3 into a reader process stopped while 20,000 are written: the
// writer overwrites what is unacknowledged and never waits, so the reader gets the
// newest (the last one written is among them) and only a fraction of the rest (what
// its socket buffer held). Were the depth ignored (keep_all) it would get all 20,000
// (as the drain test above shows for keep_all); were the oldest kept, the last would
// be missing.
TEST(CycloneddsDriver, ReliableKeepLastGivesAStoppedReaderTheNewest) {
  constexpr uint64_t kWritten = 20'000;
  Cfg cfg;
  cfg.c.qos = psb_qos{PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 3};
  psb_test::ChildReport child;
  Side w(cfg);
  start_pair(cfg, child, w);
  ASSERT_EQ(kill(child.pid, SIGSTOP), 0);
  write_n(w, kWritten);
  EXPECT_EQ(drv().drain(w.writer, 1'000'000, &w.err), 0) << w.err.message;
  psb_test::expect_the_newest_after_keep_last(
      child, kWritten, [&] { return write_end(w) == 0; },
      [&] { return drv().drain(w.writer, 20'000'000'000, &w.err); });
}

TEST(CycloneddsDriver, DrainOfAWriterWithoutRemoteReadersReturnsDrainedAtOnce) {
  for (uint32_t rel : {PSB_RELIABLE, PSB_BEST_EFFORT}) {
    Cfg cfg;
    cfg.c.qos = psb_qos{rel, PSB_VOLATILE, PSB_KEEP_ALL, 0};
    Side w(cfg);
    ASSERT_TRUE(w.ctx && w.add_writer("alone")) << w.err.message;
    write_n(w, 10);
    EXPECT_EQ(drv().drain(w.writer, 0, &w.err), 1) << w.err.message;
  }
}

// Best effort over UDP into a stopped reader: its socket buffer overflows and the
// kernel drops the rest. Cyclone 0.10.2 counts none of it: its SAMPLE_LOST is raised
// only when the reader history refuses a sample older than the instance's latest
// (destination order by source timestamp), and SAMPLE_REJECTED only at resource
// limits, which psbench leaves unlimited. Both keys are reported, both 0 (pinned, so
// a Cyclone that starts counting gaps shows here).
TEST(CycloneddsDriver, CountersOfABestEffortReaderThatMissedSamples) {
  Cfg cfg;
  cfg.c.qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_ALL, 0};
  psb_test::ChildReport child;
  Side w(cfg);
  start_pair(cfg, child, w);
  ASSERT_EQ(kill(child.pid, SIGSTOP), 0);
  constexpr uint64_t kWritten = 20000;
  write_n(w, kWritten);
  auto got = psb_test::best_effort_report(child, kWritten, [&] { return write_end(w) == 0; });
  EXPECT_EQ(got.count("sample_lost"), 1u);
  EXPECT_EQ(got.count("sample_rejected"), 1u);
  EXPECT_EQ(got["sample_lost"], 0u);
  EXPECT_EQ(got["sample_rejected"], 0u);
  EXPECT_TRUE(counters_of(w.writer).empty());  // nothing a writer counts means undelivered
}

int main(int argc, char **argv) {
  if (argc == 6 && std::strcmp(argv[1], "--reader-child") == 0) return reader_child(argv + 2);
  if (argc == 5 && std::strcmp(argv[1], "--echo-child") == 0)
    return echo_child(argv[2], argv[3], std::strtoull(argv[4], nullptr, 10));
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
