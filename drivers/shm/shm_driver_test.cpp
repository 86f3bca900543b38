// Tests of the shm driver through its C ABI only: the built .so is loaded with
// dlopen, exactly as psbench-node does. No timing assertions: waits have
// generous bounds only so that a bug fails instead of hanging.
#include <dlfcn.h>
#include <glob.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"

namespace {

const psb_driver *drv() { return &psb_test::driver_under_test(); }

std::string new_run_id() {
  static int n = 0;
  return "t" + std::to_string(getpid()) + "x" + std::to_string(n++);
}

// A psb_config that owns its strings.
struct Cfg {
  std::string run_id = new_run_id();
  std::vector<std::string> opt_strings;
  std::vector<psb_option> opts;
  psb_config c{};

  // depth: the ring's slots (option slots).
  Cfg(uint32_t notify, uint32_t reliability, uint32_t depth, uint64_t max_payload,
      const char *wakeup = nullptr) {
    c.transport = "shm";
    c.notify = notify;
    c.qos = {reliability, PSB_VOLATILE, 0, 0};
    c.max_payload = max_payload;
    opt_strings = {"slots", std::to_string(depth)};
    if (wakeup != nullptr) opt_strings.insert(opt_strings.end(), {"wakeup", wakeup});
  }
  void set_slots(uint32_t n) { opt_strings[1] = std::to_string(n); }
  const psb_config *get() {
    opts.clear();
    for (size_t i = 0; i + 1 < opt_strings.size(); i += 2)
      opts.push_back({opt_strings[i].c_str(), opt_strings[i + 1].c_str()});
    c.run_id = run_id.c_str();
    c.options = opts.empty() ? nullptr : opts.data();
    c.option_count = opts.size();
    return &c;
  }
};

// Message i: length varies, bytes derive from i; seq in the first 8 bytes.
size_t msg_len(uint64_t i, size_t max) { return 32 + static_cast<size_t>(i * 37) % (max - 32 + 1); }
void fill_msg(uint64_t i, unsigned char *buf, size_t len) {
  std::memcpy(buf, &i, sizeof i);
  for (size_t j = 8; j < len; ++j) buf[j] = static_cast<unsigned char>(i * 131 + j);
}
// The seq of a correct message, or UINT64_MAX if bytes or length are wrong.
uint64_t check_msg(const void *data, size_t len, size_t max) {
  if (len < 8) return UINT64_MAX;
  uint64_t i;
  std::memcpy(&i, data, sizeof i);
  if (len != msg_len(i, max)) return UINT64_MAX;
  auto *p = static_cast<const unsigned char *>(data);
  for (size_t j = 8; j < len; ++j)
    if (p[j] != static_cast<unsigned char>(i * 131 + j)) return UINT64_MAX;
  return i;
}

std::vector<std::string> shm_files(const std::string &run_id) {
  std::vector<std::string> out;
  glob_t g;
  const std::string pat = "/dev/shm/psbench-" + run_id + "*";
  if (glob(pat.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

bool wait_until(const std::function<bool()> &cond, int seconds = 30) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

constexpr int64_t kSecond = 1'000'000'000;

class ShmDriver : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(drv(), nullptr) << dlerror(); }
};

TEST_F(ShmDriver, TableAndCapabilities) {
  const psb_driver *d = drv();
  EXPECT_EQ(d->abi_version, PSB_ABI_VERSION);
  EXPECT_STREQ(d->name, "shm");
  EXPECT_EQ(std::string(d->version()).rfind("posix-shm (linux ", 0), 0u) << d->version();
  EXPECT_EQ(d->caps.reliability, unsigned(PSB_BEST_EFFORT | PSB_RELIABLE));
  EXPECT_EQ(d->caps.durability, unsigned(PSB_VOLATILE));
  EXPECT_EQ(d->caps.history, 0u);  // the ring size is option slots
  EXPECT_EQ(d->caps.notify, unsigned(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  ASSERT_NE(d->caps.transports, nullptr);
  EXPECT_STREQ(d->caps.transports[0], "shm");
  EXPECT_EQ(d->caps.transports[1], nullptr);
  EXPECT_STREQ(d->caps.option_keys[0], "wakeup");
  EXPECT_STREQ(d->caps.option_keys[1], "slots");
  EXPECT_EQ(d->caps.option_keys[2], nullptr);
  EXPECT_GE(d->caps.max_payload, 4194304u);
  EXPECT_NE(d->loan, nullptr);
  EXPECT_NE(d->write_loan, nullptr);
}

TEST_F(ShmDriver, CheckAcceptsAndRefuses) {
  const psb_driver *d = drv();
  psb_error err{};
  Cfg ok(PSB_NOTIFY_WAIT, PSB_RELIABLE, 16, 4194304, "spin");
  EXPECT_EQ(psb_test::check(*d, ok.get(), &err), 0) << err.message;

  Cfg keep_all(PSB_NOTIFY_WAIT, PSB_RELIABLE, 16, 1024);
  keep_all.c.qos.history = PSB_KEEP_ALL;
  EXPECT_NE(psb_test::check(*d, keep_all.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "keep_all"), nullptr) << err.message;

  // keep_last means the newest N; a full ring keeps the oldest: refused, not mislabelled.
  Cfg keep_last(PSB_NOTIFY_WAIT, PSB_BEST_EFFORT, 16, 1024);
  keep_last.c.qos.history = PSB_KEEP_LAST;
  keep_last.c.qos.history_depth = 4;
  EXPECT_NE(psb_test::check(*d, keep_last.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "option slots"), nullptr) << err.message;

  Cfg depth0(PSB_NOTIFY_WAIT, PSB_RELIABLE, 0, 1024);
  EXPECT_NE(psb_test::check(*d, depth0.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "slots"), nullptr) << err.message;

  Cfg wake(PSB_NOTIFY_WAIT, PSB_RELIABLE, 16, 1024, "sleepy");
  EXPECT_NE(psb_test::check(*d, wake.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "wakeup"), nullptr) << err.message;
  EXPECT_NE(std::strstr(err.message, "futex"), nullptr) << err.message;
  EXPECT_NE(std::strstr(err.message, "spin"), nullptr) << err.message;

  Cfg big(PSB_NOTIFY_WAIT, PSB_RELIABLE, 16, 4194305);
  EXPECT_NE(psb_test::check(*d, big.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "max_payload"), nullptr) << err.message;

  Cfg durable(PSB_NOTIFY_WAIT, PSB_RELIABLE, 16, 1024);
  durable.c.qos.durability = PSB_TRANSIENT_LOCAL;
  EXPECT_NE(psb_test::check(*d, durable.get(), &err), 0);
  EXPECT_NE(std::strstr(err.message, "durability"), nullptr) << err.message;

  // open() refuses the same way.
  EXPECT_EQ(d->open(wake.get(), &err), nullptr);
  EXPECT_NE(std::strstr(err.message, "wakeup"), nullptr) << err.message;
}

struct Mode {
  uint32_t notify;
  const char *wakeup;
  uint32_t reliability;
};

std::string mode_string(const Mode &m) {
  std::string n = m.notify == PSB_NOTIFY_POLL   ? "poll"
                  : m.notify == PSB_NOTIFY_WAIT ? "wait"
                                                : "listener";
  n += "_";
  n += m.wakeup;
  n += m.reliability == PSB_RELIABLE ? "_reliable" : "_best_effort";
  return n;
}
std::string mode_name(const ::testing::TestParamInfo<Mode> &info) {
  return mode_string(info.param);
}
void PrintTo(const Mode &m, std::ostream *os) { *os << mode_string(m); }

class ShmRoundTrip : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { ASSERT_NE(drv(), nullptr); }
};

// Writer and reader in two threads, each with its own context (intra-process
// placement). Reliable: all N in order. Best effort: what arrives is intact,
// in order, without duplicates, and the end marker eventually gets through.
TEST_P(ShmRoundTrip, PassesMessagesBetweenThreads) {
  const psb_driver *d = drv();
  const Mode m = GetParam();
  constexpr uint64_t kN = 20000;
  constexpr size_t kMax = 1500;
  const bool reliable = m.reliability == PSB_RELIABLE;
  Cfg cfg(m.notify, m.reliability, 16, kMax, m.wakeup);
  psb_error err{};
  psb_context *wctx = d->open(cfg.get(), &err);
  ASSERT_NE(wctx, nullptr) << err.message;
  psb_context *rctx = d->open(cfg.get(), &err);
  ASSERT_NE(rctx, nullptr) << err.message;

  std::atomic<uint64_t> received{0}, bad{0}, out_of_order{0};
  std::atomic<bool> got_last{false};
  uint64_t next = 0;  // touched only by the receiving thread
  auto on_sample = [&](const void *data, size_t len) {
    const uint64_t i = check_msg(data, len, kMax);
    if (i == UINT64_MAX) {
      ++bad;
      return;
    }
    if (!reliable && i == kN - 1 && next == kN)
      return;  // a repeat of the last message (see the writer)
    if (reliable ? i != next : i < next) ++out_of_order;
    next = i + 1;
    if (i == kN - 1) got_last = true;
    received.fetch_add(1);
  };
  std::function<void(const void *, size_t)> fn = on_sample;
  psb_on_data cb = nullptr;
  if (m.notify == PSB_NOTIFY_LISTENER)
    cb = [](void *user, const void *data, size_t len) {
      (*static_cast<std::function<void(const void *, size_t)> *>(user))(data, len);
    };
  psb_reader *r = d->create_reader(rctx, "psb_rt_data", cb, &fn, &err);
  ASSERT_NE(r, nullptr) << err.message;
  psb_writer *w = d->create_writer(wctx, "psb_rt_data", &err);
  ASSERT_NE(w, nullptr) << err.message;
  EXPECT_EQ(d->matched_readers(w), 1);
  EXPECT_EQ(d->matched_writers(r), 1);

  std::atomic<bool> writer_done{false};
  std::thread writer([&] {
    std::vector<unsigned char> buf(kMax);
    psb_error werr{};
    for (uint64_t i = 0; i < kN; ++i) {
      const size_t len = msg_len(i, kMax);
      fill_msg(i, buf.data(), len);
      // Best effort may drop the last message; repeat it until it lands.
      do {
        if (d->write(w, buf.data(), len, &werr) != 0) {
          ++bad;
          break;
        }
        if (reliable || i != kN - 1 || got_last) break;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      } while (!got_last);
    }
    writer_done = true;
  });

  if (m.notify == PSB_NOTIFY_LISTENER) {
    EXPECT_TRUE(wait_until([&] { return got_last.load() || bad > 0; }, 60));
  } else {
    std::thread reader([&] {
      psb_error rerr{};
      const int64_t timeout = m.notify == PSB_NOTIFY_POLL ? 0 : kSecond / 10;
      int idle = 0;
      while (!got_last && bad == 0 && idle < 600) {  // 60 s of silence at most
        const void *data;
        size_t len;
        const int rc = d->take(r, timeout, &data, &len, &rerr);
        if (rc < 0) {
          ++bad;
          break;
        }
        if (rc == 0) {
          if (m.notify == PSB_NOTIFY_POLL) {
            if (writer_done) ++idle, std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
          }
          ++idle;
          continue;
        }
        idle = 0;
        on_sample(data, len);
        if (received % 3 == 0) d->release(r);
      }
    });
    reader.join();
  }
  writer.join();
  EXPECT_TRUE(got_last.load());
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(out_of_order.load(), 0u);
  if (reliable)
    EXPECT_EQ(received.load(), kN);
  else
    EXPECT_GT(received.load(), 0u);
  d->destroy_writer(w);
  d->destroy_reader(r);
  d->close(wctx);
  d->close(rctx);
  EXPECT_TRUE(shm_files(cfg.run_id).empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, ShmRoundTrip,
                         ::testing::Values(Mode{PSB_NOTIFY_POLL, "futex", PSB_RELIABLE},
                                           Mode{PSB_NOTIFY_WAIT, "futex", PSB_RELIABLE},
                                           Mode{PSB_NOTIFY_WAIT, "spin", PSB_RELIABLE},
                                           Mode{PSB_NOTIFY_LISTENER, "futex", PSB_RELIABLE},
                                           Mode{PSB_NOTIFY_LISTENER, "spin", PSB_RELIABLE},
                                           Mode{PSB_NOTIFY_POLL, "futex", PSB_BEST_EFFORT},
                                           Mode{PSB_NOTIFY_WAIT, "futex", PSB_BEST_EFFORT},
                                           Mode{PSB_NOTIFY_LISTENER, "futex", PSB_BEST_EFFORT}),
                         mode_name);

// Ping/pong as the node does it in intra-process placement: two roles, each
// with its own context, a writer and a reader on two topics.
TEST_F(ShmDriver, PingPongBetweenThreads) {
  const psb_driver *d = drv();
  constexpr uint64_t kN = 5000;
  constexpr size_t kMax = 256;
  Cfg cfg(PSB_NOTIFY_WAIT, PSB_BEST_EFFORT, 16, kMax);
  psb_error err{};
  psb_context *ping_ctx = d->open(cfg.get(), &err);
  psb_context *pong_ctx = d->open(cfg.get(), &err);
  ASSERT_NE(ping_ctx, nullptr);
  ASSERT_NE(pong_ctx, nullptr);
  std::atomic<int> failures{0};
  std::atomic<bool> pong_ready{false};
  std::thread pong([&] {
    psb_error e{};
    psb_reader *r = d->create_reader(pong_ctx, "psb_pp_ping", nullptr, nullptr, &e);
    psb_writer *w = d->create_writer(pong_ctx, "psb_pp_pong", &e);
    if (r == nullptr || w == nullptr) {
      ++failures;
      pong_ready = true;
      return;
    }
    pong_ready = true;
    for (uint64_t n = 0; n < kN;) {
      const void *data;
      size_t len;
      const int rc = d->take(r, kSecond, &data, &len, &e);
      if (rc < 0) {
        ++failures;
        break;
      }
      if (rc == 0) continue;
      if (d->write(w, data, len, &e) != 0) ++failures;
      ++n;
    }
    d->destroy_reader(r);
    d->destroy_writer(w);
  });
  psb_writer *w = d->create_writer(ping_ctx, "psb_pp_ping", &err);
  psb_reader *r = d->create_reader(ping_ctx, "psb_pp_pong", nullptr, nullptr, &err);
  ASSERT_NE(w, nullptr) << err.message;
  ASSERT_NE(r, nullptr) << err.message;
  ASSERT_TRUE(wait_until([&] { return pong_ready.load(); }));
  ASSERT_TRUE(wait_until([&] { return d->matched_readers(w) == 1; }));
  std::vector<unsigned char> buf(kMax);
  uint64_t echoed = 0;
  for (uint64_t i = 0; i < kN && failures == 0; ++i) {
    const size_t len = msg_len(i, kMax);
    fill_msg(i, buf.data(), len);
    ASSERT_EQ(d->write(w, buf.data(), len, &err), 0) << err.message;
    const void *data;
    size_t got;
    ASSERT_EQ(d->take(r, 30 * kSecond, &data, &got, &err), 1) << err.message;
    EXPECT_EQ(check_msg(data, got, kMax), i);
    ++echoed;
  }
  pong.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(echoed, kN);
  d->destroy_writer(w);
  d->destroy_reader(r);
  d->close(ping_ctx);
  d->close(pong_ctx);
  EXPECT_TRUE(shm_files(cfg.run_id).empty());
}

// Reliable with a two-slot ring and a reader slower than the writer: the
// writer waits, nothing is lost, order is kept.
TEST_F(ShmDriver, ReliableSmallRingSlowReaderDeliversAllInOrder) {
  const psb_driver *d = drv();
  constexpr uint64_t kN = 500;
  constexpr size_t kMax = 512;
  Cfg cfg(PSB_NOTIFY_WAIT, PSB_RELIABLE, 2, kMax);
  psb_error err{};
  psb_context *wctx = d->open(cfg.get(), &err);
  psb_context *rctx = d->open(cfg.get(), &err);
  ASSERT_NE(wctx, nullptr);
  ASSERT_NE(rctx, nullptr);
  psb_writer *w = d->create_writer(wctx, "psb_slow_data", &err);
  psb_reader *r = d->create_reader(rctx, "psb_slow_data", nullptr, nullptr, &err);
  ASSERT_NE(w, nullptr) << err.message;
  ASSERT_NE(r, nullptr) << err.message;
  std::atomic<int> write_errors{0};
  std::thread writer([&] {
    std::vector<unsigned char> buf(kMax);
    psb_error e{};
    for (uint64_t i = 0; i < kN; ++i) {
      const size_t len = msg_len(i, kMax);
      fill_msg(i, buf.data(), len);
      if (d->write(w, buf.data(), len, &e) != 0) ++write_errors;
    }
  });
  std::vector<uint64_t> seqs;
  for (int idle = 0; seqs.size() < kN && idle < 30;) {
    const void *data;
    size_t len;
    const int rc = d->take(r, kSecond, &data, &len, &err);
    ASSERT_GE(rc, 0) << err.message;
    if (rc == 0) {
      ++idle;
      continue;
    }
    seqs.push_back(check_msg(data, len, kMax));
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // slow reader
  }
  writer.join();
  EXPECT_EQ(write_errors.load(), 0);
  ASSERT_EQ(seqs.size(), kN);
  for (uint64_t i = 0; i < kN; ++i) ASSERT_EQ(seqs[i], i);
  d->destroy_reader(r);
  d->destroy_writer(w);
  d->close(rctx);
  d->close(wctx);
}

// Best effort with a full ring: write returns at once and the newest samples
// are dropped; the reader gets the oldest depth samples.
TEST_F(ShmDriver, BestEffortFullRingDropsInsteadOfBlocking) {
  const psb_driver *d = drv();
  constexpr size_t kMax = 64;
  Cfg cfg(PSB_NOTIFY_POLL, PSB_BEST_EFFORT, 4, kMax);
  psb_error err{};
  psb_context *ctx = d->open(cfg.get(), &err);
  ASSERT_NE(ctx, nullptr) << err.message;
  psb_writer *w = d->create_writer(ctx, "psb_be_data", &err);
  psb_reader *r = d->create_reader(ctx, "psb_be_data", nullptr, nullptr, &err);
  ASSERT_NE(w, nullptr) << err.message;
  ASSERT_NE(r, nullptr) << err.message;
  unsigned char buf[kMax];
  for (uint64_t i = 0; i < 10; ++i) {
    const size_t len = msg_len(i, kMax);
    fill_msg(i, buf, len);
    EXPECT_EQ(d->write(w, buf, len, &err), 0) << err.message;
  }
  const void *data;
  size_t len;
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_EQ(d->take(r, 0, &data, &len, &err), 1);
    EXPECT_EQ(check_msg(data, len, kMax), i);
  }
  EXPECT_EQ(d->take(r, 0, &data, &len, &err), 0);
  // Room again once taken samples are freed.
  fill_msg(10, buf, msg_len(10, kMax));
  EXPECT_EQ(d->write(w, buf, msg_len(10, kMax), &err), 0);
  ASSERT_EQ(d->take(r, 0, &data, &len, &err), 1);
  EXPECT_EQ(check_msg(data, len, kMax), 10u);
  d->destroy_reader(r);
  d->destroy_writer(w);
  d->close(ctx);
}

// A reliable writer blocked on a full ring is let go (sample dropped) when
// the reader goes away.
TEST_F(ShmDriver, ReliableWriterReleasedWhenReaderLeaves) {
  const psb_driver *d = drv();
  Cfg cfg(PSB_NOTIFY_WAIT, PSB_RELIABLE, 1, 64);
  psb_error err{};
  psb_context *wctx = d->open(cfg.get(), &err);
  psb_context *rctx = d->open(cfg.get(), &err);
  psb_writer *w = d->create_writer(wctx, "psb_rel_data", &err);
  psb_reader *r = d->create_reader(rctx, "psb_rel_data", nullptr, nullptr, &err);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(r, nullptr);
  unsigned char buf[64] = {};
  ASSERT_EQ(d->write(w, buf, 64, &err), 0);
  std::atomic<int> rc{-2};
  std::thread writer([&] {
    psb_error e{};
    rc = d->write(w, buf, 64, &e);  // ring full: waits for the reader
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  d->destroy_reader(r);
  writer.join();
  EXPECT_EQ(rc.load(), 0);
  d->destroy_writer(w);
  d->close(rctx);
  d->close(wctx);
}

TEST_F(ShmDriver, FourMiBMessageRoundTrips) {
  const psb_driver *d = drv();
  constexpr size_t kBig = 4194304;
  Cfg cfg(PSB_NOTIFY_WAIT, PSB_RELIABLE, 2, kBig);
  psb_error err{};
  psb_context *wctx = d->open(cfg.get(), &err);
  psb_context *rctx = d->open(cfg.get(), &err);
  ASSERT_NE(wctx, nullptr) << err.message;
  ASSERT_NE(rctx, nullptr) << err.message;
  psb_writer *w = d->create_writer(wctx, "psb_big_data", &err);
  ASSERT_NE(w, nullptr) << err.message;
  psb_reader *r = d->create_reader(rctx, "psb_big_data", nullptr, nullptr, &err);
  ASSERT_NE(r, nullptr) << err.message;
  std::vector<unsigned char> buf(kBig);
  for (size_t j = 0; j < kBig; ++j) buf[j] = static_cast<unsigned char>(j * 7 + (j >> 12));
  std::thread writer([&] {
    psb_error e{};
    for (int k = 0; k < 3; ++k) EXPECT_EQ(d->write(w, buf.data(), kBig, &e), 0) << e.message;
  });
  for (int k = 0; k < 3; ++k) {
    const void *data;
    size_t len;
    ASSERT_EQ(d->take(r, 30 * kSecond, &data, &len, &err), 1) << err.message;
    ASSERT_EQ(len, kBig);
    EXPECT_EQ(std::memcmp(data, buf.data(), kBig), 0);
  }
  writer.join();
  // One byte too many is an error, not a truncation.
  std::vector<unsigned char> too_big(kBig + 1);
  EXPECT_EQ(d->write(w, too_big.data(), too_big.size(), &err), -1);
  EXPECT_NE(std::strstr(err.message, "max_payload"), nullptr) << err.message;
  d->destroy_reader(r);
  d->destroy_writer(w);
  d->close(rctx);
  d->close(wctx);
}

TEST_F(ShmDriver, LoanWritesIntoTheSlot) {
  const psb_driver *d = drv();
  constexpr size_t kMax = 4096;
  Cfg cfg(PSB_NOTIFY_POLL, PSB_BEST_EFFORT, 2, kMax);
  cfg.c.use_loan = 1;
  psb_error err{};
  psb_context *ctx = d->open(cfg.get(), &err);
  psb_writer *w = d->create_writer(ctx, "psb_loan_data", &err);
  psb_reader *r = d->create_reader(ctx, "psb_loan_data", nullptr, nullptr, &err);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(r, nullptr);
  for (uint64_t i = 0; i < 3; ++i) {  // the third is dropped (ring of 2)
    const size_t len = msg_len(i, kMax);
    void *s = d->loan(w, len, &err);
    ASSERT_NE(s, nullptr) << err.message;
    fill_msg(i, static_cast<unsigned char *>(s), len);
    EXPECT_EQ(d->write_loan(w, s, len, &err), 0) << err.message;
  }
  const void *data;
  size_t len;
  for (uint64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(d->take(r, 0, &data, &len, &err), 1);
    EXPECT_EQ(check_msg(data, len, kMax), i);
  }
  EXPECT_EQ(d->take(r, 0, &data, &len, &err), 0);
  unsigned char stray[16];
  EXPECT_EQ(d->write_loan(w, stray, sizeof stray, &err), -1);
  d->close(ctx);  // also destroys the endpoints left open
  EXPECT_TRUE(shm_files(cfg.run_id).empty());
}

TEST_F(ShmDriver, MismatchedSidesAreRefused) {
  const psb_driver *d = drv();
  Cfg a(PSB_NOTIFY_WAIT, PSB_RELIABLE, 8, 1024);
  Cfg b = a;  // same run id
  b.c.max_payload = 2048;
  Cfg c = a;
  c.set_slots(4);
  Cfg e = a;
  e.c.qos.reliability = PSB_BEST_EFFORT;
  psb_error err{};
  psb_context *actx = d->open(a.get(), &err);
  psb_context *bctx = d->open(b.get(), &err);
  psb_context *cctx = d->open(c.get(), &err);
  psb_context *ectx = d->open(e.get(), &err);
  psb_writer *w = d->create_writer(actx, "psb_mm_data", &err);
  ASSERT_NE(w, nullptr) << err.message;
  EXPECT_EQ(d->create_reader(bctx, "psb_mm_data", nullptr, nullptr, &err), nullptr);
  EXPECT_NE(std::strstr(err.message, "max_payload"), nullptr) << err.message;
  EXPECT_EQ(d->create_reader(cctx, "psb_mm_data", nullptr, nullptr, &err), nullptr);
  EXPECT_NE(std::strstr(err.message, "slots"), nullptr) << err.message;
  EXPECT_EQ(d->create_reader(ectx, "psb_mm_data", nullptr, nullptr, &err), nullptr);
  EXPECT_NE(std::strstr(err.message, "reliability"), nullptr) << err.message;
  // A second writer on a topic is refused; the first keeps working.
  EXPECT_EQ(d->create_writer(actx, "psb_mm_data", &err), nullptr);
  EXPECT_NE(std::strstr(err.message, "already has a writer"), nullptr) << err.message;
  psb_reader *r = d->create_reader(actx, "psb_mm_data", nullptr, nullptr, &err);
  ASSERT_NE(r, nullptr) << err.message;
  EXPECT_EQ(d->matched_readers(w), 1);
  d->destroy_reader(r);
  EXPECT_EQ(d->matched_readers(w), 0);
  d->destroy_writer(w);
  for (psb_context *ctx : {actx, bctx, cctx, ectx}) d->close(ctx);
  EXPECT_TRUE(shm_files(a.run_id).empty());
}

TEST_F(ShmDriver, NoSegmentLeftAfterDestroyAndClose) {
  const psb_driver *d = drv();
  for (uint32_t notify : {PSB_NOTIFY_POLL, PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER}) {
    Cfg cfg(notify, PSB_RELIABLE, 4, 128);
    psb_error err{};
    psb_context *ctx = d->open(cfg.get(), &err);
    ASSERT_NE(ctx, nullptr) << err.message;
    psb_on_data cb = nullptr;
    if (notify == PSB_NOTIFY_LISTENER) cb = [](void *, const void *, size_t) {};
    psb_writer *w = d->create_writer(ctx, "psb_cl_ping", &err);
    psb_reader *r = d->create_reader(ctx, "psb_cl_ping", cb, nullptr, &err);
    ASSERT_NE(w, nullptr) << err.message;
    ASSERT_NE(r, nullptr) << err.message;
    struct stat st;
    EXPECT_EQ(stat(("/dev/shm/psbench-" + cfg.run_id + "-psb_cl_ping").c_str(), &st), 0);
    EXPECT_EQ(d->matched_readers(w), 1);
    EXPECT_EQ(d->matched_writers(r), 1);
    d->destroy_reader(r);  // an idle listener thread stops promptly
    EXPECT_EQ(d->matched_readers(w), 0);
    d->destroy_writer(w);
    d->close(ctx);
    EXPECT_TRUE(shm_files(cfg.run_id).empty());
  }
}

// Across processes: the child writes, the parent reads.
TEST_F(ShmDriver, ForkChildWritesParentReads) {
  const psb_driver *d = drv();
  constexpr uint64_t kN = 5000;
  constexpr size_t kMax = 2048;
  Cfg cfg(PSB_NOTIFY_WAIT, PSB_RELIABLE, 8, kMax);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    psb_error e{};
    psb_context *ctx = d->open(cfg.get(), &e);
    if (ctx == nullptr) _exit(10);
    psb_writer *w = d->create_writer(ctx, "psb_fork_data", &e);
    if (w == nullptr) _exit(11);
    for (int i = 0; d->matched_readers(w) < 1; ++i) {
      if (i > 30000) _exit(12);
      usleep(1000);
    }
    std::vector<unsigned char> buf(kMax);
    for (uint64_t i = 0; i < kN; ++i) {
      const size_t len = msg_len(i, kMax);
      fill_msg(i, buf.data(), len);
      if (d->write(w, buf.data(), len, &e) != 0) _exit(13);
    }
    d->destroy_writer(w);
    d->close(ctx);
    _exit(0);
  }
  psb_error err{};
  psb_context *ctx = d->open(cfg.get(), &err);
  ASSERT_NE(ctx, nullptr) << err.message;
  psb_reader *r = d->create_reader(ctx, "psb_fork_data", nullptr, nullptr, &err);
  ASSERT_NE(r, nullptr) << err.message;
  uint64_t next = 0;
  for (int idle = 0; next < kN && idle < 30;) {
    const void *data;
    size_t len;
    const int rc = d->take(r, kSecond, &data, &len, &err);
    ASSERT_GE(rc, 0) << err.message;
    if (rc == 0) {
      ++idle;
      continue;
    }
    ASSERT_EQ(check_msg(data, len, kMax), next);
    ++next;
  }
  EXPECT_EQ(next, kN);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  d->destroy_reader(r);
  d->close(ctx);
  EXPECT_TRUE(shm_files(cfg.run_id).empty());
}

}  // namespace
