// The iceoryx driver through its ABI table only: the built .so is loaded with dlopen,
// as psbench-node does. No timing assertions: waits have generous bounds only so that
// a bug fails instead of hanging.
//
// iceoryx needs its daemon, and allows one per machine. main() (below) therefore:
//  - uses a RouDi that already runs (someone else's) as it is, and never stops it;
//  - otherwise starts its own `iox-roudi` with a generated configuration, runs the
//    tests in a forked child (the iceoryx runtime lives until its process ends, and
//    RouDi sends SIGTERM to processes still registered when it stops), then stops
//    RouDi with SIGTERM and checks that it left nothing in /dev/shm;
//  - runs the SmallRouDi tests against a second, deliberately small configuration
//    (largest chunk 64 KiB, few chunks), which they need to show what happens when
//    no mempool fits or a mempool runs dry. With someone else's RouDi they skip.
// A lock keeps two of these test processes from starting RouDis at once.
// Run with --echo-child ...: this binary is the peer process of the inter-process test
// (a fresh exec, since an iceoryx runtime must not be forked).
#include <fcntl.h>
#include <fnmatch.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_config.hpp"

extern char **environ;

namespace {

const psb_driver &drv() { return psb_test::driver_under_test(); }

constexpr uint64_t kMiB = 1 << 20;
constexpr int64_t kMs = 1'000'000;

// Which RouDi the tests in this process talk to.
enum class Phase { external, normal, small };
Phase g_phase = Phase::external;
// check()'s and open()'s answers before any RouDi ran, or "(roudi was running)".
std::string g_check_without_roudi, g_open_without_roudi;

// A RouDi configuration (iceoryx 2.0 TOML): one segment, a mempool of `count` chunks of
// `size` payload bytes for each {size, count}.
std::string roudi_config(std::initializer_list<std::pair<int, int>> mempools) {
  std::string toml = "[general]\nversion = 1\n\n[[segment]]\n";
  for (const auto &[size, count] : mempools)
    toml += "\n[[segment.mempool]]\nsize = " + std::to_string(size) +
            "\ncount = " + std::to_string(count) + "\n";
  return toml;
}

const std::string kNormalConfig = roudi_config(
    {{128, 2000}, {1024, 500}, {16384, 300}, {131072, 20}, {1048576, 16}, {4194304, 16}});

constexpr int kSmallPoolChunks = 8;  // 16 KiB chunks in the small configuration
const std::string kSmallConfig = roudi_config({{128, 200}, {16384, kSmallPoolChunks}, {65536, 4}});

// A psb_config that owns its strings: shm, 64 B unless the test says.
struct Cfg : psb_test::OwnedConfig {
  explicit Cfg(uint32_t notify = PSB_NOTIFY_WAIT, uint64_t max_payload = 64,
               uint32_t reliability = PSB_RELIABLE)
      : OwnedConfig(psb_test::fresh_run_id("ioxt"), "shm", max_payload, notify, reliability) {}
  Cfg &keep_last(uint32_t n) {
    c.qos.history = PSB_KEEP_LAST;
    c.qos.history_depth = n;
    return *this;
  }
  Cfg &keep_all() {
    c.qos.history = PSB_KEEP_ALL;
    c.qos.history_depth = 0;
    return *this;
  }
  Cfg &transient_local() {
    c.qos.durability = PSB_TRANSIENT_LOCAL;
    return *this;
  }
};

// One context, destroyed with everything it holds (Owned).
struct Side : psb_test::Owned {
  psb_context *ctx;

  explicit Side(Cfg &cfg) : ctx(open(cfg.get())) {}
  psb_writer *writer(const std::string &topic) { return Owned::writer(ctx, topic); }
  psb_reader *reader(const std::string &topic, psb_on_data cb = nullptr, void *user = nullptr) {
    return Owned::reader(ctx, topic, cb, user);
  }
};

std::string topic_of(const Cfg &cfg, const char *suffix) {
  return "psb_" + cfg.run_id + "_" + suffix;
}

using psb_test::wait_until;

// A writer (context a) and a reader (context b, with cb if given) of cfg's topic "data";
// ok once both exist and the writer counts the reader (within 10 s).
struct MatchedPair {
  explicit MatchedPair(Cfg &cfg, psb_on_data cb = nullptr, void *user = nullptr) : a(cfg), b(cfg) {
    if (a.ctx == nullptr || b.ctx == nullptr) return;
    w = a.writer(topic_of(cfg, "data"));
    r = b.reader(topic_of(cfg, "data"), cb, user);
    ok = w && r && wait_until([&] { return drv().matched_readers(w) == 1; });
  }
  Side a, b;
  psb_writer *w = nullptr;
  psb_reader *r = nullptr;
  bool ok = false;
};

// Message i of len bytes: the sequence number in the first 8 bytes, then bytes derived
// from it.
std::vector<unsigned char> message(uint64_t seq, size_t len) {
  std::vector<unsigned char> m(len);
  for (size_t j = 0; j < len; ++j) m[j] = static_cast<unsigned char>(seq * 131 + j * 7);
  if (len >= 8) std::memcpy(m.data(), &seq, 8);
  return m;
}
uint64_t seq_of(const void *data) {
  uint64_t s;
  std::memcpy(&s, data, 8);
  return s;
}
bool intact(const void *data, size_t len, size_t want_len) {
  if (len != want_len || len < 8) return false;
  auto m = message(seq_of(data), len);
  return std::memcmp(m.data(), data, len) == 0;
}

int write_msg(psb_writer *w, uint64_t seq, size_t len) {
  auto m = message(seq, len);
  psb_error err{};
  int r = drv().write(w, m.data(), m.size(), &err);
  EXPECT_EQ(r, 0) << err.message;
  return r;
}

// Takes one sample within timeout; -2 on timeout, else its seq (the sample is intact
// with the given length, or the test fails).
int64_t take_seq(psb_reader *r, size_t want_len, int64_t timeout_ns = 10'000 * kMs) {
  const void *data;
  size_t len;
  psb_error err{};
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    int got = drv().take(r, 50 * kMs, &data, &len, &err);
    EXPECT_GE(got, 0) << err.message;
    if (got == 1) {
      EXPECT_TRUE(intact(data, len, want_len)) << "len " << len << " want " << want_len;
      int64_t s = static_cast<int64_t>(seq_of(data));
      drv().release(r);
      return s;
    }
    if (got < 0 || std::chrono::steady_clock::now() > end) return -2;
  }
}

// A reliable writer sends n messages of size bytes while a reader thread takes them,
// pausing pause_ms every pause_every: the writer waits for it, so every one arrives, in
// order.
void expect_a_slow_reader_gets_every_message(psb_writer *w, psb_reader *r, uint64_t n, size_t size,
                                             uint64_t pause_every, int pause_ms) {
  std::vector<int64_t> seen;
  std::thread reader([&] {
    for (uint64_t i = 0; i < n; ++i) {
      if (i % pause_every == 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      int64_t s = take_seq(r, size);
      if (s < 0) break;
      seen.push_back(s);
    }
  });
  for (uint64_t i = 0; i < n; ++i) write_msg(w, i, size);
  reader.join();
  ASSERT_EQ(seen.size(), n);
  for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], int64_t(i));
}

// Every sample of a listener, copied out of the callback.
struct Collected {
  std::mutex mu;
  std::vector<uint64_t> seqs;
  std::atomic<int> bad{0};
  size_t want_len = 0;
  static void on_data(void *self, const void *data, size_t len) {
    auto *c = static_cast<Collected *>(self);
    if (!intact(data, len, c->want_len)) c->bad++;
    std::lock_guard<std::mutex> g(c->mu);
    c->seqs.push_back(len >= 8 ? seq_of(data) : UINT64_MAX);
  }
  size_t count() {
    std::lock_guard<std::mutex> g(mu);
    return seqs.size();
  }
};

std::string error_of_check(Cfg &cfg) {
  psb_error err{};
  return psb_test::check(drv(), cfg.get(), &err) == 0 ? std::string() : std::string(err.message);
}

void need_phase(Phase p) {
  if (p == Phase::small && g_phase == Phase::external)
    GTEST_SKIP()
        << "an iox-roudi someone else started is running; these tests need one with their own "
           "small configuration";
  if (g_phase != Phase::external && g_phase != p)
    GTEST_SKIP() << "runs against the other RouDi configuration";
}

class IceoryxDriver : public ::testing::Test {
 protected:
  void SetUp() override { need_phase(Phase::normal); }
};

class SmallRouDi : public ::testing::Test {
 protected:
  void SetUp() override { need_phase(Phase::small); }
};

// --- what the driver says about itself, and what it refuses

TEST_F(IceoryxDriver, DescribesItself) {
  const psb_driver &d = drv();
  EXPECT_EQ(d.abi_version, PSB_ABI_VERSION);
  EXPECT_STREQ(d.name, "iceoryx");
  EXPECT_EQ(std::string(d.version()).rfind("2.0.", 0), 0u) << d.version();
  EXPECT_NE(std::string(d.version()).find("libiceoryx_posh built"), std::string::npos)
      << d.version();
  EXPECT_EQ(d.caps.reliability, unsigned(PSB_BEST_EFFORT | PSB_RELIABLE));
  EXPECT_EQ(d.caps.durability, unsigned(PSB_VOLATILE | PSB_TRANSIENT_LOCAL));
  EXPECT_EQ(d.caps.history, unsigned(PSB_KEEP_LAST | PSB_KEEP_ALL));
  EXPECT_EQ(d.caps.notify, unsigned(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  ASSERT_NE(d.caps.transports, nullptr);
  EXPECT_STREQ(d.caps.transports[0], "shm");
  EXPECT_EQ(d.caps.transports[1], nullptr);
  EXPECT_TRUE(d.caps.option_keys == nullptr || d.caps.option_keys[0] == nullptr);
  EXPECT_EQ(d.caps.max_payload, 4194304u);
  EXPECT_NE(d.loan, nullptr);
  EXPECT_NE(d.write_loan, nullptr);
  EXPECT_NE(d.release, nullptr);
  EXPECT_NE(d.matched_readers, nullptr);
  EXPECT_NE(d.matched_writers, nullptr);
}

TEST_F(IceoryxDriver, OpenRefusesWithoutRouDiAndCheckDoesNot) {
  if (g_check_without_roudi == "(roudi was running)")
    GTEST_SKIP() << "an iox-roudi was already running when the tests started";
  // check() judges the configuration, which is fine; open() meets the missing RouDi.
  EXPECT_EQ(g_check_without_roudi, "");
  EXPECT_NE(g_open_without_roudi.find("iceoryx: iox-roudi is not running"), std::string::npos)
      << g_open_without_roudi;
}

TEST_F(IceoryxDriver, AcceptsWhatItCanHonour) {
  std::vector<Cfg> ok;
  ok.emplace_back(PSB_NOTIFY_POLL, 4194304, PSB_BEST_EFFORT);
  ok.emplace_back(PSB_NOTIFY_LISTENER, 32, PSB_RELIABLE);
  ok.emplace_back(PSB_NOTIFY_WAIT).keep_last(256);
  ok.emplace_back(PSB_NOTIFY_WAIT).keep_all();
  ok.emplace_back(PSB_NOTIFY_WAIT, 64, PSB_BEST_EFFORT).transient_local().keep_last(16);
  ok.emplace_back(PSB_NOTIFY_WAIT, 64, PSB_BEST_EFFORT).transient_local();
  for (auto &c : ok) EXPECT_EQ(error_of_check(c), "");
}

TEST_F(IceoryxDriver, RefusesWhatItCannotHonourNamingTheSetting) {
  struct Case {
    std::function<void(Cfg &)> set;
    const char *says;
  };
  const Case cases[] = {
      {[](Cfg &c) { c.keep_last(257); },
       "history keep_last:257 is not supported; an iceoryx subscriber queue holds 1 to 256"},
      {[](Cfg &c) { c.keep_last(0); }, "history keep_last:0 is not supported"},
      {[](Cfg &c) { c.c.qos.reliability = PSB_BEST_EFFORT, c.keep_all(); },
       "history keep_all needs reliability reliable"},
      {[](Cfg &c) { c.transient_local().keep_last(17); },
       "durability transient_local with history keep_last:17 is not supported; an iceoryx "
       "publisher keeps at most 16"},
      {[](Cfg &c) { c.transient_local().keep_all(); },
       "durability transient_local with history keep_all is not supported"},
      {[](Cfg &c) { c.transport = "udp"; },
       "transport 'udp' is not supported; this driver supports shm"},
      {[](Cfg &c) { c.c.max_payload = 4194305; },
       "max_payload 4194305 is not supported; supported: 1 to 4194304"},
      {[](Cfg &c) { c.run_id = "a-b"; }, "run_id 'a-b' must match [A-Za-z0-9]+"},
      {[](Cfg &c) { c.options.emplace_back("broker", "127.0.0.1:1"); },
       "unknown option 'broker'; this driver takes no options"},
  };
  for (const Case &k : cases) {
    Cfg cfg;
    k.set(cfg);
    const std::string said = error_of_check(cfg);
    EXPECT_NE(said.find(std::string("iceoryx: ") + k.says), std::string::npos)
        << "check said: " << said;
    psb_error err{};  // open() refuses the same way, before registering with RouDi
    EXPECT_EQ(drv().open(cfg.get(), &err), nullptr);
    EXPECT_NE(std::string(err.message).find(k.says), std::string::npos) << err.message;
  }
}

// --- exchange

struct ModeCase {
  uint32_t notify;
  uint32_t reliability;
};
std::string mode_name(const ::testing::TestParamInfo<ModeCase> &info) {
  std::string n = info.param.notify == PSB_NOTIFY_POLL   ? "poll"
                  : info.param.notify == PSB_NOTIFY_WAIT ? "wait"
                                                         : "listener";
  return n + (info.param.reliability == PSB_RELIABLE ? "_reliable" : "_best_effort");
}

class IceoryxModes : public ::testing::TestWithParam<ModeCase> {
 protected:
  void SetUp() override { need_phase(Phase::normal); }
};

// Writer and reader in two contexts of this process (intra-process placement: they
// share the process's one iceoryx runtime), every size from 32 B to 4 MiB, written
// plainly and loaned.
TEST_P(IceoryxModes, SeveralSizesArriveIntact) {
  const ModeCase m = GetParam();
  Cfg cfg(m.notify, 4 * kMiB, m.reliability);
  cfg.keep_last(4);
  Side a(cfg), b(cfg);
  ASSERT_NE(a.ctx, nullptr) << a.err.message;
  ASSERT_NE(b.ctx, nullptr) << b.err.message;
  const std::string topic = topic_of(cfg, "data");
  psb_writer *w = a.writer(topic);
  ASSERT_NE(w, nullptr) << a.err.message;
  Collected got;
  psb_reader *r = m.notify == PSB_NOTIFY_LISTENER ? b.reader(topic, &Collected::on_data, &got)
                                                  : b.reader(topic);
  ASSERT_NE(r, nullptr) << b.err.message;
  ASSERT_TRUE(
      wait_until([&] { return drv().matched_readers(w) == 1 && drv().matched_writers(r) == 1; }));

  const size_t sizes[] = {32, 64, 1000, 16384, 100000, kMiB, 4 * kMiB};
  uint64_t seq = 0;
  for (size_t len : sizes) {
    for (int loaned = 0; loaned < 2; ++loaned, ++seq) {
      got.want_len = len;
      if (loaned) {
        psb_error err{};
        void *chunk = drv().loan(w, len, &err);
        ASSERT_NE(chunk, nullptr) << err.message;
        auto msg = message(seq, len);
        std::memcpy(chunk, msg.data(), len);
        ASSERT_EQ(drv().write_loan(w, chunk, len, &err), 0) << err.message;
      } else {
        ASSERT_EQ(write_msg(w, seq, len), 0);
      }
      if (m.notify == PSB_NOTIFY_LISTENER) {
        ASSERT_TRUE(wait_until([&] { return got.count() == seq + 1; })) << "size " << len;
      } else if (m.notify == PSB_NOTIFY_POLL) {
        const void *data;
        size_t n;
        psb_error err{};
        int r1 = 0;
        ASSERT_TRUE(wait_until([&] { return (r1 = drv().take(r, 0, &data, &n, &err)) != 0; }))
            << "size " << len;
        ASSERT_EQ(r1, 1) << err.message;
        EXPECT_TRUE(intact(data, n, len)) << "size " << len;
        EXPECT_EQ(seq_of(data), seq);
        drv().release(r);
      } else {
        EXPECT_EQ(take_seq(r, len), int64_t(seq)) << "size " << len;
      }
    }
  }
  if (m.notify == PSB_NOTIFY_LISTENER) {
    EXPECT_EQ(got.bad.load(), 0);
    std::lock_guard<std::mutex> g(got.mu);
    for (uint64_t i = 0; i < got.seqs.size(); ++i) EXPECT_EQ(got.seqs[i], i);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, IceoryxModes,
                         ::testing::Values(ModeCase{PSB_NOTIFY_POLL, PSB_BEST_EFFORT},
                                           ModeCase{PSB_NOTIFY_POLL, PSB_RELIABLE},
                                           ModeCase{PSB_NOTIFY_WAIT, PSB_BEST_EFFORT},
                                           ModeCase{PSB_NOTIFY_WAIT, PSB_RELIABLE},
                                           ModeCase{PSB_NOTIFY_LISTENER, PSB_BEST_EFFORT},
                                           ModeCase{PSB_NOTIFY_LISTENER, PSB_RELIABLE}),
                         mode_name);

TEST_F(IceoryxDriver, TakeAndLoanAreZeroCopy) {
  // In one process the shared memory is mapped once, so the reader's sample is at the
  // very address of the chunk the writer loaned; a plain write() copies the message
  // into a chunk, so the reader's sample is not the writer's buffer.
  Cfg cfg(PSB_NOTIFY_POLL, 16384);
  Side s(cfg);
  ASSERT_NE(s.ctx, nullptr) << s.err.message;
  psb_writer *w = s.writer(topic_of(cfg, "data"));
  psb_reader *r = s.reader(topic_of(cfg, "data"));
  ASSERT_TRUE(w && r) << s.err.message;
  ASSERT_TRUE(wait_until([&] { return drv().matched_readers(w) == 1; }));
  psb_error err{};
  void *chunk = drv().loan(w, 16384, &err);
  ASSERT_NE(chunk, nullptr) << err.message;
  auto msg = message(7, 16384);
  std::memcpy(chunk, msg.data(), msg.size());
  ASSERT_EQ(drv().write_loan(w, chunk, 16384, &err), 0) << err.message;
  const void *data = nullptr;
  size_t len = 0;
  ASSERT_EQ(drv().take(r, 0, &data, &len, &err), 1) << err.message;
  EXPECT_EQ(data, chunk);
  EXPECT_EQ(len, 16384u);
  // The sample stays valid until release() or the next take().
  EXPECT_TRUE(intact(data, len, 16384));
  drv().release(r);

  ASSERT_EQ(drv().write(w, msg.data(), msg.size(), &err), 0) << err.message;
  ASSERT_EQ(drv().take(r, 0, &data, &len, &err), 1) << err.message;
  EXPECT_NE(data, static_cast<const void *>(msg.data()));
  EXPECT_TRUE(intact(data, len, 16384));
  // No release: the next take() gives it back, and finds nothing new.
  EXPECT_EQ(drv().take(r, 0, &data, &len, &err), 0);
}

TEST_F(IceoryxDriver, WriteLoanTakesOnlyWhatLoanGave) {
  Cfg cfg(PSB_NOTIFY_POLL, 1024);
  Side s(cfg);
  ASSERT_NE(s.ctx, nullptr) << s.err.message;
  psb_writer *w = s.writer(topic_of(cfg, "data"));
  ASSERT_NE(w, nullptr) << s.err.message;
  psb_error err{};
  unsigned char foreign[64] = {};
  EXPECT_EQ(drv().write_loan(w, foreign, sizeof foreign, &err), -1);
  EXPECT_NE(std::string(err.message).find("write_loan got a sample that loan() did not return"),
            std::string::npos)
      << err.message;
  void *chunk = drv().loan(w, 100, &err);
  ASSERT_NE(chunk, nullptr) << err.message;
  EXPECT_EQ(drv().write_loan(w, chunk, 99, &err), -1);
  EXPECT_NE(std::string(err.message).find("write_loan of 99 bytes for a chunk loaned for 100"),
            std::string::npos)
      << err.message;
  EXPECT_EQ(drv().write_loan(w, chunk, 100, &err), -1);  // already given back
  EXPECT_EQ(drv().loan(w, 1025, &err), nullptr);
  EXPECT_NE(std::string(err.message).find("loan of 1025 bytes exceeds max_payload 1024"),
            std::string::npos)
      << err.message;
  auto big = message(1, 1025);
  EXPECT_EQ(drv().write(w, big.data(), big.size(), &err), -1);
  EXPECT_NE(std::string(err.message).find("exceeds max_payload"), std::string::npos) << err.message;
}

TEST_F(IceoryxDriver, NothingSentMeansNothingTaken) {
  Cfg wait(PSB_NOTIFY_WAIT), poll(PSB_NOTIFY_POLL);
  Side a(wait), b(poll);
  ASSERT_TRUE(a.ctx && b.ctx) << a.err.message << b.err.message;
  psb_reader *rw = a.reader(topic_of(wait, "data"));
  psb_reader *rp = b.reader(topic_of(poll, "data"));
  ASSERT_TRUE(rw && rp);
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(drv().take(rw, 0, &data, &len, &err), 0);
  EXPECT_EQ(drv().take(rw, 20 * kMs, &data, &len, &err), 0);  // waits, then nothing
  EXPECT_EQ(drv().take(rp, 0, &data, &len, &err), 0);
  EXPECT_EQ(drv().matched_writers(rw), 0);
}

TEST_F(IceoryxDriver, MatchedCountsFollowTheEndpoints) {
  Cfg cfg(PSB_NOTIFY_WAIT);
  Side pub(cfg), sub1(cfg), sub2(cfg);
  ASSERT_TRUE(pub.ctx && sub1.ctx && sub2.ctx);
  const std::string topic = topic_of(cfg, "data");
  psb_writer *w = pub.writer(topic);
  ASSERT_NE(w, nullptr) << pub.err.message;
  EXPECT_EQ(drv().matched_readers(w), 0);
  psb_reader *r1 = sub1.reader(topic);
  ASSERT_NE(r1, nullptr);
  EXPECT_TRUE(
      wait_until([&] { return drv().matched_readers(w) == 1 && drv().matched_writers(r1) == 1; }));
  psb_reader *r2 = sub2.reader(topic);
  ASSERT_NE(r2, nullptr);
  EXPECT_TRUE(
      wait_until([&] { return drv().matched_readers(w) == 2 && drv().matched_writers(r2) == 1; }));
  // A reader of another run's topic is not counted.
  Cfg other(PSB_NOTIFY_WAIT);
  Side stranger(other);
  ASSERT_NE(stranger.reader(topic), nullptr);  // same topic text, other run id
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(drv().matched_readers(w), 2);
  sub1.drop_reader(r1);
  EXPECT_TRUE(wait_until([&] { return drv().matched_readers(w) == 1; }));
  pub.drop_writer(w);
  EXPECT_TRUE(wait_until([&] { return drv().matched_writers(r2) == 0; }));
}

TEST_F(IceoryxDriver, ReliableWriterWaitsForASlowReaderAndLosesNothing) {
  // keep_all: the writer waits whenever the queue (256) is full.
  Cfg cfg(PSB_NOTIFY_WAIT, 256, PSB_RELIABLE);
  cfg.keep_all();
  MatchedPair p(cfg);
  ASSERT_TRUE(p.ok) << p.a.err.message << p.b.err.message;
  expect_a_slow_reader_gets_every_message(p.w, p.r, 1500, 256, 10, 2);
}

TEST_F(IceoryxDriver, ReliableKeepAllLosesNothingEither) {
  Cfg cfg(PSB_NOTIFY_LISTENER, 128, PSB_RELIABLE);
  cfg.keep_all();
  Collected got;
  got.want_len = 128;
  MatchedPair p(cfg, &Collected::on_data, &got);
  ASSERT_TRUE(p.ok) << p.a.err.message << p.b.err.message;
  constexpr uint64_t kN = 5000;  // far more than the queue's 256
  for (uint64_t i = 0; i < kN; ++i) write_msg(p.w, i, 128);
  ASSERT_TRUE(wait_until([&] { return got.count() == kN; })) << got.count();
  EXPECT_EQ(got.bad.load(), 0);
  std::lock_guard<std::mutex> g(got.mu);
  for (uint64_t i = 0; i < kN; ++i) ASSERT_EQ(got.seqs[i], i);
}

// keep_last:N means the newest N with either reliability, as in DDS: a reliable writer
// does not wait for a reader that stopped taking; the reader then gets the last N. (It
// used to wait: a reliable keep_last:3 reader got seq 0-9, every one, where a DDS
// reader gets 7-9.) The writes run on a thread, so that a writer that waits fails the
// test instead of hanging it.
TEST_F(IceoryxDriver, ReliableKeepLastGivesAStalledReaderTheNewestN) {
  Cfg cfg(PSB_NOTIFY_WAIT, 64, PSB_RELIABLE);
  cfg.keep_last(3);
  MatchedPair p(cfg);
  ASSERT_TRUE(p.ok) << p.a.err.message << p.b.err.message;
  constexpr uint64_t kN = 1000;
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    for (uint64_t i = 0; i < kN; ++i, ++written) write_msg(p.w, i, 64);
  });
  const bool never_waited = wait_until([&] { return written.load() == kN; }, 10);
  const uint64_t written_alone = written.load();
  std::vector<int64_t> seen;
  for (int64_t s; (s = take_seq(p.r, 64, 300 * kMs)) >= 0;)
    seen.push_back(s);  // frees a waiting writer
  writer.join();
  EXPECT_TRUE(never_waited) << written_alone << " of " << kN << " written before the reader took";
  EXPECT_EQ(seen, (std::vector<int64_t>{997, 998, 999}));
}

TEST_F(IceoryxDriver, BestEffortKeepsTheLastN) {
  Cfg cfg(PSB_NOTIFY_POLL, 64, PSB_BEST_EFFORT);
  cfg.keep_last(3);
  Side s(cfg);
  ASSERT_NE(s.ctx, nullptr);
  psb_writer *w = s.writer(topic_of(cfg, "data"));
  psb_reader *r = s.reader(topic_of(cfg, "data"));
  ASSERT_TRUE(w && r);
  ASSERT_TRUE(wait_until([&] { return drv().matched_readers(w) == 1; }));
  for (uint64_t i = 0; i < 10; ++i) ASSERT_EQ(write_msg(w, i, 64), 0);  // never waits
  for (int64_t want : {7, 8, 9}) EXPECT_EQ(take_seq(r, 64), want);
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(drv().take(r, 0, &data, &len, &err), 0);
}

TEST_F(IceoryxDriver, TransientLocalLateJoinerGetsTheLastN) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER}) {
    Cfg cfg(notify, 64, PSB_RELIABLE);
    cfg.transient_local().keep_last(3);
    Side a(cfg), b(cfg);
    ASSERT_TRUE(a.ctx && b.ctx);
    psb_writer *w = a.writer(topic_of(cfg, "data"));
    ASSERT_NE(w, nullptr);
    for (uint64_t i = 0; i < 5; ++i) ASSERT_EQ(write_msg(w, i, 64), 0);  // nobody listens yet
    Collected got;
    got.want_len = 64;
    psb_reader *r = notify == PSB_NOTIFY_LISTENER
                        ? b.reader(topic_of(cfg, "data"), &Collected::on_data, &got)
                        : b.reader(topic_of(cfg, "data"));
    ASSERT_NE(r, nullptr);
    std::vector<int64_t> seen;
    if (notify == PSB_NOTIFY_LISTENER) {
      ASSERT_TRUE(wait_until([&] { return got.count() == 3; }));
      for (uint64_t s : got.seqs) seen.push_back(int64_t(s));
    } else {
      for (int i = 0; i < 3; ++i) seen.push_back(take_seq(r, 64));
    }
    EXPECT_EQ(seen, (std::vector<int64_t>{2, 3, 4}));
  }
}

TEST_F(IceoryxDriver, VolatileLateJoinerGetsNothingOld) {
  Cfg cfg(PSB_NOTIFY_WAIT, 64, PSB_RELIABLE);
  cfg.keep_last(3);
  Side a(cfg), b(cfg);
  psb_writer *w = a.writer(topic_of(cfg, "data"));
  ASSERT_NE(w, nullptr);
  for (uint64_t i = 0; i < 5; ++i) ASSERT_EQ(write_msg(w, i, 64), 0);
  psb_reader *r = b.reader(topic_of(cfg, "data"));
  ASSERT_TRUE(wait_until([&] { return drv().matched_readers(w) == 1; }));
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(drv().take(r, 200 * kMs, &data, &len, &err), 0);
  ASSERT_EQ(write_msg(w, 5, 64), 0);
  EXPECT_EQ(take_seq(r, 64), 5);
}

TEST_F(IceoryxDriver, ListenerStopsOnDestroy) {
  Cfg cfg(PSB_NOTIFY_LISTENER, 64, PSB_BEST_EFFORT);
  Collected got;
  got.want_len = 64;
  MatchedPair p(cfg, &Collected::on_data, &got);
  ASSERT_TRUE(p.ok) << p.a.err.message << p.b.err.message;
  for (uint64_t i = 0; i < 100; ++i) write_msg(p.w, i, 64);
  ASSERT_TRUE(wait_until([&] { return got.count() == 100; }));
  // take() belongs to the other modes.
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(drv().take(p.r, 0, &data, &len, &err), -1);
  EXPECT_NE(std::string(err.message).find("take() is not used in listener mode"),
            std::string::npos);
  p.b.drop_reader(p.r);
  EXPECT_TRUE(wait_until([&] { return drv().matched_readers(p.w) == 0; }));
  for (uint64_t i = 100; i < 110; ++i) write_msg(p.w, i, 64);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(got.count(), 100u);
}

TEST_F(IceoryxDriver, CloseDestroysWhatWasLeftOpen) {
  Cfg cfg(PSB_NOTIFY_LISTENER, 64);
  Collected got;
  psb_context *ctx;
  psb_error err{};
  ASSERT_NE(ctx = drv().open(cfg.get(), &err), nullptr) << err.message;
  psb_writer *w = drv().create_writer(ctx, topic_of(cfg, "a").c_str(), &err);
  psb_reader *r =
      drv().create_reader(ctx, topic_of(cfg, "b").c_str(), &Collected::on_data, &got, &err);
  ASSERT_TRUE(w && r) << err.message;
  ASSERT_NE(drv().loan(w, 64, &err), nullptr);  // a loan never written
  drv().close(ctx);                             // joins the listener, gives the chunk back
  Cfg same(PSB_NOTIFY_WAIT, 64);
  same.run_id = cfg.run_id;
  Side watcher(same);
  psb_reader *rw = watcher.reader(topic_of(cfg, "a"));
  ASSERT_NE(rw, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(drv().matched_writers(rw), 0);
}

// --- another process

int echo_child(const char *run_id, const char *notify, uint64_t count) {
  Cfg cfg(std::strcmp(notify, "poll") == 0 ? PSB_NOTIFY_POLL : PSB_NOTIFY_WAIT, 4 * kMiB);
  cfg.run_id = run_id;
  psb_error err{};
  psb_context *ctx = drv().open(cfg.get(), &err);
  if (!ctx) {
    std::fprintf(stderr, "echo child: %s\n", err.message);
    return 2;
  }
  psb_writer *w = drv().create_writer(ctx, topic_of(cfg, "pong").c_str(), &err);
  psb_reader *r = drv().create_reader(ctx, topic_of(cfg, "ping").c_str(), nullptr, nullptr, &err);
  if (!w || !r) {
    std::fprintf(stderr, "echo child: %s\n", err.message);
    return 2;
  }
  uint64_t echoed = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (echoed < count && std::chrono::steady_clock::now() < give_up) {
    const void *data;
    size_t len;
    int got = drv().take(r, cfg.c.notify == PSB_NOTIFY_POLL ? 0 : 50 * kMs, &data, &len, &err);
    if (got < 0) break;
    if (got == 1) {
      if (drv().write(w, data, len, &err) != 0) break;  // straight from the chunk taken
      ++echoed;
    }
  }
  drv().close(ctx);
  return echoed == count ? 0 : 1;
}

TEST_F(IceoryxDriver, AnotherProcessEchoesUpToFourMiBIntact) {
  for (const char *notify : {"wait", "poll"}) {
    Cfg cfg(std::strcmp(notify, "poll") == 0 ? PSB_NOTIFY_POLL : PSB_NOTIFY_WAIT, 4 * kMiB);
    Side s(cfg);
    ASSERT_NE(s.ctx, nullptr) << s.err.message;
    psb_writer *w = s.writer(topic_of(cfg, "ping"));
    psb_reader *r = s.reader(topic_of(cfg, "pong"));
    ASSERT_TRUE(w && r) << s.err.message;
    const size_t sizes[] = {64, 16384, 4 * kMiB};
    const uint64_t per_size = 5;
    std::string count = std::to_string(per_size * std::size(sizes));
    char self[] = "/proc/self/exe";
    std::vector<char *> argv = {self,
                                const_cast<char *>("--echo-child"),
                                cfg.run_id.data(),
                                const_cast<char *>(notify),
                                count.data(),
                                nullptr};
    pid_t child;
    ASSERT_EQ(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv.data(), environ), 0);
    EXPECT_TRUE(
        wait_until([&] { return drv().matched_readers(w) == 1 && drv().matched_writers(r) == 1; }));
    uint64_t seq = 0;
    for (size_t len : sizes)
      for (uint64_t i = 0; i < per_size; ++i, ++seq) {
        write_msg(w, seq, len);
        EXPECT_EQ(take_seq(r, len), int64_t(seq)) << notify << " size " << len;
      }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "echo child status " << status;
  }
}

// --- RouDi's mempools (the small configuration: 128 B, 16 KiB x 8, 64 KiB x 4)

TEST_F(SmallRouDi, NoMempoolForTheLargestMessageIsAClearError) {
  Cfg cfg(PSB_NOTIFY_WAIT, kMiB);
  Side s(cfg);
  ASSERT_NE(s.ctx, nullptr) << s.err.message;
  EXPECT_EQ(s.writer(topic_of(cfg, "data")), nullptr);
  EXPECT_NE(std::string(s.err.message)
                .find("iceoryx: no RouDi mempool holds 1048576-byte chunks (the largest holds "
                      "65536-byte payloads"),
            std::string::npos)
      << s.err.message;
  EXPECT_NE(
      std::string(s.err.message).find("psbench sizes RouDi for the experiment's largest message"),
      std::string::npos);
  // The largest that fits is fine.
  Cfg fits(PSB_NOTIFY_WAIT, 65536);
  Side t(fits);
  EXPECT_NE(t.writer(topic_of(fits, "data")), nullptr) << t.err.message;
}

TEST_F(SmallRouDi, BestEffortWriteFailsClearlyWhenTheMempoolRunsDry) {
  // A reader that never takes, with a queue deeper than the 8 chunks of 16 KiB.
  Cfg cfg(PSB_NOTIFY_WAIT, 16384, PSB_BEST_EFFORT);
  cfg.keep_last(16);
  Side s(cfg);
  psb_writer *w = s.writer(topic_of(cfg, "data"));
  psb_reader *r = s.reader(topic_of(cfg, "data"));
  ASSERT_TRUE(w && r) << s.err.message;
  ASSERT_TRUE(wait_until([&] { return drv().matched_readers(w) == 1; }));
  auto msg = message(0, 16384);
  psb_error err{};
  int ok = 0;
  for (int i = 0; i < kSmallPoolChunks && drv().write(w, msg.data(), msg.size(), &err) == 0; ++i)
    ++ok;
  EXPECT_EQ(ok, kSmallPoolChunks) << err.message;
  EXPECT_EQ(drv().write(w, msg.data(), msg.size(), &err), -1);
  EXPECT_NE(std::string(err.message)
                .find("iceoryx: RouDi's mempool of 16424-byte chunks (for 16384-byte messages) "
                      "is exhausted: all 8 chunks are in use"),
            std::string::npos)
      << err.message;
  EXPECT_EQ(drv().loan(w, 16384, &err), nullptr);
  // Taking (and releasing) gives a chunk back, and writes go through again.
  EXPECT_EQ(take_seq(r, 16384), 0);
  EXPECT_EQ(drv().write(w, msg.data(), msg.size(), &err), 0) << err.message;
}

TEST_F(SmallRouDi, ReliableWriterWaitsForAFreeChunk) {
  // The queue (16) is deeper than the mempool (8 chunks): the writer waits for chunks,
  // not for queue room, and still loses nothing.
  Cfg cfg(PSB_NOTIFY_WAIT, 16384, PSB_RELIABLE);
  cfg.keep_last(16);
  MatchedPair p(cfg);
  ASSERT_TRUE(p.ok) << p.a.err.message << p.b.err.message;
  expect_a_slow_reader_gets_every_message(p.w, p.r, 100, 16384, 5, 5);
}

// --- main: RouDi for the tests

bool roudi_listening() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, "/tmp/roudi");
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  bool up = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
  close(fd);
  return up;
}

std::vector<std::string> iceoryx_shm_files() {
  std::vector<std::string> left;
  const passwd *pw = getpwuid(geteuid());
  for (std::string name : {std::string("iceoryx_mgmt"), std::string(pw ? pw->pw_name : "root")}) {
    struct stat st;
    if (stat(("/dev/shm/" + name).c_str(), &st) == 0) left.push_back(name);
  }
  return left;
}

std::string read_file(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct RouDi {
  pid_t pid = -1;
  std::string dir, log;

  // Starts iox-roudi with this configuration; false (with a message) if it does not
  // become ready.
  bool start(const char *config) {
    char tmpl[] = "/tmp/psbench-iceoryx-test-XXXXXX";
    if (!mkdtemp(tmpl)) return false;
    dir = tmpl;
    const std::string cfg = dir + "/roudi.toml";
    log = dir + "/roudi.log";
    std::ofstream(cfg) << config;
    pid = fork();
    if (pid == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      setsid();
      execlp("iox-roudi", "iox-roudi", "-c", cfg.c_str(), "-l", "info",
             static_cast<char *>(nullptr));
      std::perror("exec iox-roudi");
      _exit(127);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < end) {
      if (read_file(log).find("RouDi is ready for clients") != std::string::npos) return true;
      int status;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::fprintf(stderr, "iox-roudi did not become ready; its log:\n%s\n", read_file(log).c_str());
    stop();
    return false;
  }

  // SIGTERM (RouDi removes its shared memory), then checks nothing is left.
  bool stop() {
    bool ok = true;
    if (pid > 0) {
      kill(pid, SIGTERM);
      int status = 0;
      for (int i = 0; i < 400 && waitpid(pid, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (waitpid(pid, &status, WNOHANG) == 0) {
        std::fprintf(stderr, "iox-roudi did not end on SIGTERM; killing it\n");
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ok = false;
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "iox-roudi ended with status %d; its log:\n%s\n", status,
                     read_file(log).c_str());
        ok = false;
      }
      pid = -1;
    }
    for (const std::string &f : iceoryx_shm_files()) {
      std::fprintf(stderr, "iox-roudi left /dev/shm/%s behind\n", f.c_str());
      ok = false;
    }
    if (!dir.empty()) {
      std::remove((dir + "/roudi.toml").c_str());
      std::remove(log.c_str());
      rmdir(dir.c_str());
      dir.clear();
    }
    return ok;
  }
};

// gtest's filter ("POSITIVE[-NEGATIVE]", ':'-separated globs) applied to one test.
bool filter_selects(const std::string &filter, const std::string &name) {
  auto any = [&](const std::string &patterns) {
    size_t start = 0;
    for (;;) {
      const size_t end = patterns.find(':', start);
      const std::string p =
          patterns.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!p.empty() && fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
      if (end == std::string::npos) return false;
      start = end + 1;
    }
  };
  const size_t dash = filter.find('-');
  const std::string pos = filter.substr(0, dash);
  const std::string neg = dash == std::string::npos ? std::string() : filter.substr(dash + 1);
  return (pos.empty() || any(pos)) && !any(neg);
}

bool is_small(const char *suite) { return std::strcmp(suite, "SmallRouDi") == 0; }

// Which phases the filter needs, and the filter for each: the user's, less the other
// phase's suites (so that a phase prints nothing about tests it does not run).
struct Plan {
  bool normal = false, small = false;
  std::string normal_filter, small_filter;
};

Plan plan_phases() {
  Plan plan;
  const std::string filter = GTEST_FLAG_GET(filter);
  const std::string join = filter.find('-') == std::string::npos ? "-" : ":";
  std::string small_suites, other_suites;
  const ::testing::UnitTest &all = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < all.total_test_suite_count(); ++i) {
    const ::testing::TestSuite &suite = *all.GetTestSuite(i);
    std::string &list = is_small(suite.name()) ? small_suites : other_suites;
    list += (list.empty() ? "" : ":") + std::string(suite.name()) + ".*";
    for (int j = 0; j < suite.total_test_count(); ++j)
      if (filter_selects(filter, std::string(suite.name()) + "." + suite.GetTestInfo(j)->name()))
        (is_small(suite.name()) ? plan.small : plan.normal) = true;
  }
  plan.normal_filter = small_suites.empty() ? filter : filter + join + small_suites;
  plan.small_filter = other_suites.empty() ? filter : filter + join + other_suites;
  return plan;
}

// Runs the tests this filter selects in a child process against a RouDi of this
// configuration.
int run_phase(Phase phase, const char *config, const std::string &filter) {
  RouDi roudi;
  if (!roudi.start(config)) return 1;
  std::fflush(nullptr);
  pid_t child = fork();
  if (child == 0) {
    g_phase = phase;
    GTEST_FLAG_SET(filter, filter);
    std::exit(RUN_ALL_TESTS());  // exit(): the iceoryx runtime deregisters from RouDi
  }
  int status = 0;
  waitpid(child, &status, 0);
  const bool clean = roudi.stop();
  if (!clean) std::fprintf(stderr, "FAILED: iox-roudi did not end cleanly\n");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 && clean ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 5 && std::strcmp(argv[1], "--echo-child") == 0)
    return echo_child(argv[2], argv[3], std::strtoull(argv[4], nullptr, 10));
  ::testing::InitGoogleTest(&argc, argv);
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();  // test discovery at build time: no RouDi

  // One of these test processes at a time may decide whether to start RouDi: the lock
  // is an abstract socket name, released by the kernel when the process ends (no file).
  const int lock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un lock_addr{};
  lock_addr.sun_family = AF_UNIX;
  const char lock_name[] = "psbench-iceoryx-driver-test";
  std::memcpy(lock_addr.sun_path + 1, lock_name, sizeof lock_name - 1);
  const socklen_t lock_len = offsetof(sockaddr_un, sun_path) + sizeof lock_name;
  while (bind(lock, reinterpret_cast<sockaddr *>(&lock_addr), lock_len) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

  if (roudi_listening()) {
    g_check_without_roudi = g_open_without_roudi = "(roudi was running)";
    g_phase = Phase::external;  // someone else's: used as it is, never stopped
    return RUN_ALL_TESTS();
  }
  Cfg probe;
  g_check_without_roudi = error_of_check(probe);
  psb_error err{};
  if (psb_context *ctx = drv().open(probe.get(), &err)) {
    drv().close(ctx);
    g_open_without_roudi = "(opened)";
  } else {
    g_open_without_roudi = err.message;
  }

  const Plan plan = plan_phases();
  int rc = 0;
  if (plan.normal || !plan.small)
    rc |= run_phase(Phase::normal, kNormalConfig.c_str(), plan.normal_filter);
  if (plan.small) rc |= run_phase(Phase::small, kSmallConfig.c_str(), plan.small_filter);
  return rc;
}
