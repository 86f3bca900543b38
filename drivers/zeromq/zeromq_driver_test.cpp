// The zeromq driver through its ABI table: real exchanges through libzmq over tcp, ipc
// and inproc in every notify mode, matched counts, the high-water mark's silent drops,
// keep_last:1, loans, and every refusal.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "test_config.hpp"
#include "test_net.hpp"
#include "test_received.hpp"
#include "test_signal.hpp"

namespace {

using psb_test::accepts_tcp;

using Clock = std::chrono::steady_clock;

const psb_driver &zmq_driver() { return psb_test::driver_under_test(); }

// A run id of its own per ZmqRun, so parallel test processes never share ports or paths.
std::string fresh_run_id() {
  static std::atomic<int> n{0};
  return "zmqt" + std::to_string(getpid()) + "n" + std::to_string(n++);
}

// The strings a ZmqRun's config points to: a base, so they outlive its contexts.
struct ZmqConfig {
  std::string run_id, transport_name;
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<psb_option> option_table;
  psb_config cfg{};
};

struct ZmqRun : ZmqConfig, psb_test::Owned {
  explicit ZmqRun(const char *transport, uint32_t notify = PSB_NOTIFY_WAIT,
                  std::vector<std::pair<std::string, std::string>> opts = {},
                  psb_qos qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0},
                  std::string run = fresh_run_id()) {
    run_id = std::move(run);
    transport_name = transport;
    options = std::move(opts);
    for (auto &[k, v] : options) option_table.push_back(psb_option{k.c_str(), v.c_str()});
    cfg.run_id = run_id.c_str();
    cfg.transport = transport_name.c_str();
    cfg.notify = notify;
    cfg.qos = qos;
    cfg.max_payload = 4u << 20;
    cfg.options = option_table.data();
    cfg.option_count = option_table.size();
    cfg.intra_process = 1;  // every endpoint of these tests lives in this process
  }
  psb_context *open() { return Owned::open(&cfg); }
  std::string topic(const char *suffix) const { return "psb_" + run_id + "_" + suffix; }
};

std::vector<uint8_t> message(size_t size, uint32_t seq) {
  std::vector<uint8_t> m(size);
  std::memcpy(m.data(), &seq, sizeof seq);
  for (size_t i = sizeof seq; i < size; ++i) m[i] = uint8_t(seq * 31 + i * 13);
  return m;
}

// Polls pred every millisecond for up to 10 s (an upper bound, not a timing assertion).
bool eventually(const std::function<bool()> &pred) {
  const auto end = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pred();
}

bool matched(psb_writer *writer, psb_reader *reader, int readers = 1) {
  return eventually([&] {
    return zmq_driver().matched_readers(writer) == readers &&
           zmq_driver().matched_writers(reader) >= 1;
  });
}

// A writer and a reader of topic suffix in two contexts of run (as ping and pong), matched.
bool open_matched(ZmqRun &run, const char *suffix, psb_writer *&w, psb_reader *&r) {
  psb_context *ctx_w = run.open(), *ctx_r = run.open();
  w = run.writer(ctx_w, run.topic(suffix));
  r = run.reader(ctx_r, run.topic(suffix));
  return w && r && matched(w, r);
}

// Takes one message within 5 s in the reader's notify mode; empty on none.
std::vector<uint8_t> take_one(psb_reader *reader, uint32_t notify) {
  return psb_test::take_one(reader, notify == PSB_NOTIFY_POLL ? 0 : 50'000'000);
}

// Takes until the reader stays quiet for quiet_ms; returns the first 4 bytes (seq) of each.
std::vector<uint32_t> drain(psb_reader *reader, int quiet_ms = 300) {
  std::vector<uint32_t> seqs;
  for (;;) {
    const void *data = nullptr;
    size_t len = 0;
    psb_error err{};
    int r = zmq_driver().take(reader, int64_t(quiet_ms) * 1'000'000, &data, &len, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r != 1) return seqs;
    uint32_t seq = 0;
    if (len >= sizeof seq) std::memcpy(&seq, data, sizeof seq);
    seqs.push_back(seq);
  }
}

const char *const kTransports[] = {"tcp", "ipc", "inproc"};

uint32_t fnv1a(const std::string &s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

std::string check_message(ZmqRun &run) {
  psb_error err{};
  if (psb_test::check(zmq_driver(), &run.cfg, &err) == 0) return "(accepted)";
  return err.message;
}

}  // namespace

TEST(ZeromqDriver, VersionIsTheLoadedLibzmq) {
  int major, minor, patch;
  zmq_version(&major, &minor, &patch);
  EXPECT_EQ(std::string(zmq_driver().version()),
            std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  EXPECT_STREQ(zmq_driver().name, "zeromq");
  EXPECT_EQ(zmq_driver().caps.max_payload, 4u << 20);
}

class EveryTransport : public ::testing::TestWithParam<const char *> {};
INSTANTIATE_TEST_SUITE_P(Zeromq, EveryTransport, ::testing::ValuesIn(kTransports),
                         [](const auto &info) { return std::string(info.param); });

TEST_P(EveryTransport, WaitAndPollDeliverExactBytesUpToFourMiB) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    ZmqRun run(GetParam(), notify);
    psb_context *ctx_w = run.open(), *ctx_r = run.open();  // two contexts, as ping and pong
    ASSERT_TRUE(ctx_w && ctx_r) << run.err.message;
    // The reader first: it connects before the writer binds, and is met when it does.
    psb_reader *r = run.reader(ctx_r, run.topic("data"));
    psb_writer *w = run.writer(ctx_w, run.topic("data"));
    ASSERT_TRUE(r && w) << run.err.message;
    ASSERT_TRUE(matched(w, r)) << "not matched";
    uint32_t seq = 0;
    for (size_t size : {size_t(32), size_t(33), size_t(34), size_t(64), size_t(8192), size_t(65536),
                        size_t(1) << 20, size_t(4) << 20}) {
      auto sent = message(size, ++seq);
      ASSERT_EQ(zmq_driver().write(w, sent.data(), sent.size(), &run.err), 0) << run.err.message;
      auto got = take_one(r, notify);
      ASSERT_EQ(got.size(), size) << GetParam() << " notify " << notify;
      EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
    }
  }
}

TEST_P(EveryTransport, ListenerGetsEveryMessageInOrderAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<uint32_t> seqs;
    std::vector<size_t> sizes;
  } seen;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    uint32_t seq;
    std::memcpy(&seq, data, sizeof seq);
    std::lock_guard lock(s->mu);
    s->seqs.push_back(seq);
    s->sizes.push_back(len);
  };
  ZmqRun run(GetParam(), PSB_NOTIFY_LISTENER);
  psb_context *ctx = run.open();
  ASSERT_NE(ctx, nullptr) << run.err.message;
  psb_writer *w = run.writer(ctx, run.topic("data"));
  psb_reader *r = run.reader(ctx, run.topic("data"), cb, &seen);
  ASSERT_TRUE(w && r) << run.err.message;
  ASSERT_TRUE(matched(w, r));
  for (uint32_t i = 0; i < 200; ++i) {
    auto m = message(i % 2 ? 100 : 200000, i);
    ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0) << run.err.message;
    if (i % 50 == 49)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // stay under the HWM
  }
  EXPECT_TRUE(eventually([&] {
    std::lock_guard lock(seen.mu);
    return seen.seqs.size() == 200;
  }));
  run.drop_reader(r);  // joins the listener thread
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.seqs.size(), 200u);
  for (uint32_t i = 0; i < 200; ++i) {
    EXPECT_EQ(seen.seqs[i], i);
    EXPECT_EQ(seen.sizes[i], i % 2 ? 100u : 200000u);
  }
}

TEST_P(EveryTransport, MatchedCountsFollowReadersAndWriters) {
  ZmqRun run(GetParam());
  psb_context *ctx = run.open();
  ASSERT_NE(ctx, nullptr) << run.err.message;
  psb_writer *w = run.writer(ctx, run.topic("data"));
  ASSERT_NE(w, nullptr) << run.err.message;
  EXPECT_EQ(zmq_driver().matched_readers(w), 0);
  psb_reader *r1 = run.reader(ctx, run.topic("data"));
  psb_reader *r2 = run.reader(ctx, run.topic("data"));
  ASSERT_TRUE(r1 && r2) << run.err.message;
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_readers(w) == 2; }));
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_writers(r1) == 1; }));
  run.drop_reader(r2);
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_readers(w) == 1; }));
  // A reader of another topic is not counted.
  psb_reader *other = run.reader(ctx, run.topic("pong"));
  ASSERT_NE(other, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(zmq_driver().matched_readers(w), 1);
  EXPECT_EQ(zmq_driver().matched_writers(other), 0);
  run.drop_writer(w);
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_writers(r1) == 0; }));
}

TEST_P(EveryTransport, WhatIsSentBeforeTheSubscriptionArrivesIsLostAfterItNothingIs) {
  // The slow joiner: a PUB delivers only to subscriptions it has received. Once
  // matched_readers() counts the reader, every message reaches it.
  ZmqRun run(GetParam());
  psb_writer *w;
  psb_reader *r;
  ASSERT_TRUE(open_matched(run, "data", w, r)) << run.err.message;
  for (uint32_t i = 0; i < 500; ++i) {
    auto m = message(64, i);
    ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0);
  }
  auto seqs = drain(r);
  ASSERT_EQ(seqs.size(), 500u);
  for (uint32_t i = 0; i < 500; ++i) EXPECT_EQ(seqs[i], i);
}

TEST_P(EveryTransport, AFullQueueDropsSilentlyAtTheHighWaterMark) {
  // Nobody takes while 400 messages of 64 KiB (25 MiB) go out through queues of 4
  // messages a side: the writer never fails, the reader gets fewer, in order.
  ZmqRun run(GetParam(), PSB_NOTIFY_WAIT, {{"sndhwm", "4"}, {"rcvhwm", "4"}});
  psb_writer *w;
  psb_reader *r;
  ASSERT_TRUE(open_matched(run, "data", w, r)) << run.err.message;
  const uint32_t sent = 400;
  for (uint32_t i = 0; i < sent; ++i) {
    auto m = message(65536, i);
    ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0) << run.err.message;
  }
  auto seqs = drain(r);
  EXPECT_GT(seqs.size(), 0u);
  EXPECT_LT(seqs.size(), sent);
  for (size_t i = 1; i < seqs.size(); ++i) EXPECT_LT(seqs[i - 1], seqs[i]);
}

TEST_P(EveryTransport, KeepLastOneKeepsTheNewestOnly) {
  ZmqRun run(GetParam(), PSB_NOTIFY_WAIT, {},
             psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_LAST, 1});
  psb_writer *w;
  psb_reader *r;
  ASSERT_TRUE(open_matched(run, "data", w, r)) << run.err.message;
  for (uint32_t i = 1; i <= 50; ++i) {
    auto m = message(1000, i);
    ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all 50 arrived
  auto seqs = drain(r);
  ASSERT_EQ(seqs.size(), 1u);
  EXPECT_EQ(seqs[0], 50u);
  // and the next one is delivered too
  auto m = message(64, 51);
  ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0);
  auto got = take_one(r, PSB_NOTIFY_WAIT);
  ASSERT_EQ(got.size(), 64u);
  EXPECT_TRUE(got == m);
}

TEST_P(EveryTransport, LoanedWriteDelivers) {
  ZmqRun run(GetParam());
  psb_context *ctx = run.open();
  psb_writer *w = run.writer(ctx, run.topic("data"));
  psb_reader *r = run.reader(ctx, run.topic("data"));
  ASSERT_TRUE(w && r) << run.err.message;
  ASSERT_TRUE(matched(w, r));
  for (size_t size : {size_t(32), size_t(4096), size_t(1) << 20}) {
    auto want = message(size, uint32_t(size));
    void *buf = zmq_driver().loan(w, size, &run.err);
    ASSERT_NE(buf, nullptr) << run.err.message;
    std::memcpy(buf, want.data(), size);
    ASSERT_EQ(zmq_driver().write_loan(w, buf, size, &run.err), 0) << run.err.message;
    auto got = take_one(r, PSB_NOTIFY_WAIT);
    EXPECT_TRUE(got == want) << "size " << size;
  }
  // a buffer that is not the loan is refused
  char stray[64] = {};
  void *buf = zmq_driver().loan(w, 64, &run.err);
  ASSERT_NE(buf, nullptr);
  psb_error err{};
  EXPECT_EQ(zmq_driver().write_loan(w, stray, 64, &err), -1);
  EXPECT_NE(std::string(err.message).find("loan"), std::string::npos) << err.message;
}

TEST(ZeromqDriver, InprocReceivesTheLoanedBufferItself) {
  // Zero copy end to end: over inproc the reader gets the very zmq_msg_t buffer the
  // writer lent, and it stays valid until release().
  ZmqRun run("inproc");
  psb_context *ctx = run.open();
  psb_writer *w = run.writer(ctx, run.topic("data"));
  psb_reader *r = run.reader(ctx, run.topic("data"));
  ASSERT_TRUE(w && r) << run.err.message;
  ASSERT_TRUE(matched(w, r));
  void *buf = zmq_driver().loan(w, 4096, &run.err);
  ASSERT_NE(buf, nullptr);
  std::memset(buf, 0x5a, 4096);
  ASSERT_EQ(zmq_driver().write_loan(w, buf, 4096, &run.err), 0);
  const void *data = nullptr;
  size_t len = 0;
  ASSERT_EQ(zmq_driver().take(r, 1'000'000'000, &data, &len, &run.err), 1) << run.err.message;
  EXPECT_EQ(data, buf);
  EXPECT_EQ(len, 4096u);
  EXPECT_EQ(static_cast<const uint8_t *>(data)[4095], 0x5a);
  zmq_driver().release(r);
}

TEST(ZeromqDriver, TakeReturnsNothingWhenNothingWasSent) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    ZmqRun run("tcp", notify);
    psb_context *ctx = run.open();
    psb_writer *w = run.writer(ctx, run.topic("data"));
    psb_reader *r = run.reader(ctx, run.topic("data"));
    ASSERT_TRUE(w && r) << run.err.message;
    const void *data;
    size_t len;
    EXPECT_EQ(zmq_driver().take(r, 10'000'000, &data, &len, &run.err), 0);
    EXPECT_EQ(zmq_driver().take(r, 0, &data, &len, &run.err), 0);
    EXPECT_EQ(zmq_driver().take(r, 1, &data, &len, &run.err), 0);  // rounds up to 1 ms
  }
}

TEST(ZeromqDriver, ASignalEndsAWaitWithNoSample) {
  ZmqRun run("tcp");
  psb_context *ctx = run.open();
  psb_reader *r = run.reader(ctx, run.topic("data"));
  ASSERT_NE(r, nullptr) << run.err.message;
  const auto got = psb_test::interrupted_take(r, 20'000'000'000);
  EXPECT_EQ(got.result, 0);
  EXPECT_LT(got.took, std::chrono::seconds(15)) << "the signal did not end the 20 s wait";
}

TEST(ZeromqDriver, InprocWithoutAWriterInThisProcessSaysWhy) {
  ZmqRun run("inproc");
  psb_context *ctx = run.open();
  psb_reader *r = run.reader(ctx, run.topic("pong"));
  ASSERT_NE(r, nullptr) << run.err.message;
  EXPECT_EQ(zmq_driver().matched_writers(r), 0);
  int got = 0;
  psb_error err{};
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (got == 0 && Clock::now() < end) {
    const void *data;
    size_t len;
    got = zmq_driver().take(r, 100'000'000, &data, &len, &err);
  }
  EXPECT_EQ(got, -1);
  EXPECT_NE(std::string(err.message).find("--placement intra"), std::string::npos) << err.message;
  // A writer in this process, even a late one, is what inproc needs.
  ZmqRun late("inproc");
  psb_context *ctx2 = late.open();
  psb_reader *r2 = late.reader(ctx2, late.topic("data"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  psb_writer *w2 = late.writer(ctx2, late.topic("data"));
  ASSERT_TRUE(r2 && w2);
  ASSERT_TRUE(matched(w2, r2));
  auto m = message(64, 7);
  ASSERT_EQ(zmq_driver().write(w2, m.data(), m.size(), &late.err), 0);
  EXPECT_TRUE(take_one(r2, PSB_NOTIFY_WAIT) == m);
}

TEST(ZeromqDriver, ASecondWriterOfATopicIsRefusedWithTheReason) {
  {  // tcp: the port is taken; the message names it and the ways out
    const std::string id = fresh_run_id();
    ZmqRun a("tcp", PSB_NOTIFY_WAIT, {}, psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, id);
    ZmqRun b("tcp", PSB_NOTIFY_WAIT, {}, psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, id);
    ASSERT_NE(a.writer(a.open(), a.topic("ping")), nullptr) << a.err.message;
    EXPECT_EQ(b.writer(b.open(), b.topic("ping")), nullptr);
    std::string msg = b.err.message;
    EXPECT_NE(msg.find("is in use"), std::string::npos) << msg;
    EXPECT_NE(msg.find("port_base"), std::string::npos) << msg;
  }
  {  // inproc
    ZmqRun a("inproc");
    psb_context *ctx = a.open();
    ASSERT_NE(a.writer(ctx, a.topic("ping")), nullptr);
    EXPECT_EQ(a.writer(ctx, a.topic("ping")), nullptr);
    EXPECT_NE(std::string(a.err.message).find("already has a writer"), std::string::npos)
        << a.err.message;
  }
}

TEST(ZeromqDriver, TopicsOfOneRunGetTheirOwnPortsInTheRunsBlock) {
  // ping, pong and data of one run bind side by side: port_base + 8 x (FNV-1a(run id)
  // % 1536) + 0, 1, 2 (README), so they never collide with each other.
  ZmqRun run("tcp", PSB_NOTIFY_WAIT, {{"port_base", "14000"}});
  psb_context *ctx = run.open();
  const unsigned first = 14000 + 8 * (fnv1a(run.run_id) % 1536);
  unsigned slot = 0;
  for (const char *suffix : {"ping", "pong", "data"}) {
    psb_writer *w = run.writer(ctx, run.topic(suffix));
    ASSERT_NE(w, nullptr) << suffix << ": " << run.err.message;
    EXPECT_TRUE(accepts_tcp(first + slot++)) << suffix;
  }
  EXPECT_FALSE(accepts_tcp(first + 3));
  ASSERT_NE(run.writer(ctx, run.topic("other")), nullptr) << run.err.message;
}

TEST(ZeromqDriver, IpcSocketFilesLiveInTheRunsDirectoryAndAreRemoved) {
  ZmqRun run("ipc");
  psb_context *ctx = run.open();
  const std::string dir = "/tmp/psbench-zeromq-" + run.run_id;
  psb_writer *w1 = run.writer(ctx, run.topic("ping"));
  psb_writer *w2 = run.writer(ctx, run.topic("pong"));
  ASSERT_TRUE(w1 && w2) << run.err.message;
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir + "/" + run.topic("ping")).c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  run.drop_writer(w1);
  EXPECT_NE(stat((dir + "/" + run.topic("ping")).c_str(), &st), 0);
  EXPECT_EQ(stat(dir.c_str(), &st), 0);  // pong's file is still there
  run.drop_writer(w2);
  EXPECT_NE(stat(dir.c_str(), &st), 0) << dir << " left behind";
}

TEST(ZeromqDriver, AForeignSubscriberGetsDataButIsNotCountedAsAReader) {
  // matched_readers counts SUBs that subscribed to the topic's name (what this driver's
  // readers send after ""), not any program that connects to the port and takes it all.
  ZmqRun run("tcp");
  psb_context *ctx = run.open();
  psb_writer *w = run.writer(ctx, run.topic("data"));
  ASSERT_NE(w, nullptr) << run.err.message;
  const std::string endpoint =
      "tcp://127.0.0.1:" + std::to_string(20000 + 8 * (fnv1a(run.run_id) % 1536) + 2);
  void *zctx = zmq_ctx_new();
  void *raw = zmq_socket(zctx, ZMQ_SUB);
  int linger = 0, timeout_ms = 50;
  zmq_setsockopt(raw, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(raw, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
  zmq_setsockopt(raw, ZMQ_SUBSCRIBE, "", 0);
  ASSERT_EQ(zmq_connect(raw, endpoint.c_str()), 0);
  // Write until the raw SUB receives one: it is connected and subscribed by then.
  bool received = false;
  auto m = message(64, 1);
  for (int i = 0; i < 200 && !received; ++i) {
    ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0);
    char buf[128];
    received = zmq_recv(raw, buf, sizeof buf, 0) == 64;
  }
  EXPECT_TRUE(received) << "no data at " << endpoint;
  EXPECT_EQ(zmq_driver().matched_readers(w), 0);
  zmq_setsockopt(raw, ZMQ_SUBSCRIBE, run.topic("data").data(), run.topic("data").size());
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_readers(w) == 1; }));
  zmq_close(raw);
  EXPECT_TRUE(eventually([&] { return zmq_driver().matched_readers(w) == 0; }));
  zmq_ctx_term(zctx);
}

TEST(ZeromqDriver, EveryRefusalSaysWhy) {
  struct Case {
    const char *transport;
    std::vector<std::pair<std::string, std::string>> options;
    psb_qos qos;
    const char *expect;
  };
  const psb_qos plain{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0};
  const Case cases[] = {
      {"tcp", {}, {PSB_RELIABLE, PSB_VOLATILE, 0, 0}, "high-water mark"},
      {"tcp", {}, {PSB_BEST_EFFORT, PSB_TRANSIENT_LOCAL, 0, 0}, "transient_local is not supported"},
      {"tcp", {}, {PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_ALL, 0}, "keep_all is not supported"},
      {"tcp",
       {},
       {PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_LAST, 2},
       "keep_last:2 is not supported"},
      {"tcp",
       {{"rcvhwm", "10"}},
       {PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_LAST, 1},
       "rcvhwm does not apply with history keep_last:1"},
      {"tcp", {{"sndhwm", "-1"}}, plain, "option sndhwm='-1'"},
      {"tcp", {{"rcvhwm", "lots"}}, plain, "option rcvhwm='lots'"},
      {"tcp", {{"port_base", "80"}}, plain, "option port_base='80'"},
      {"tcp", {{"port_base", "60000"}}, plain, "option port_base='60000'"},
      {"ipc", {{"port_base", "30000"}}, plain, "port_base applies to transport tcp only"},
      {"udp", {}, plain, "transport 'udp' is not supported"},
  };
  for (const Case &c : cases) {
    ZmqRun run(c.transport, PSB_NOTIFY_WAIT, c.options, c.qos);
    std::string msg = check_message(run);
    EXPECT_NE(msg.find(c.expect), std::string::npos)
        << "expected '" << c.expect << "', got: " << msg;
    EXPECT_EQ(msg.rfind("zeromq: ", 0), 0u) << msg;
    EXPECT_EQ(zmq_driver().open(&run.cfg, &run.err), nullptr) << "open accepted what check refused";
  }
  // A run id too long for a Unix socket path under ipc (fine for tcp).
  ZmqRun longer("ipc", PSB_NOTIFY_WAIT, {}, plain, std::string(60, 'x'));
  EXPECT_NE(check_message(longer).find("too long for transport ipc"), std::string::npos)
      << check_message(longer);
  ZmqRun longer_tcp("tcp", PSB_NOTIFY_WAIT, {}, plain, std::string(60, 'x'));
  EXPECT_EQ(check_message(longer_tcp), "(accepted)");
  // What is accepted
  for (auto opts : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {}, {{"sndhwm", "0"}, {"rcvhwm", "0"}}, {{"sndhwm", "1"}}, {{"port_base", "1024"}}}) {
    ZmqRun ok("tcp", PSB_NOTIFY_WAIT, opts);
    EXPECT_EQ(check_message(ok), "(accepted)");
  }
  ZmqRun conflate("tcp", PSB_NOTIFY_WAIT, {{"sndhwm", "5"}},
                  {PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_LAST, 1});
  EXPECT_EQ(check_message(conflate), "(accepted)");
}

TEST(ZeromqDriver, CloseDestroysWhatTheCallerLeftOpen) {
  // zmq_ctx_term() would wait forever for sockets left open; close() ends them first,
  // listener thread and ipc socket file included.
  ZmqRun run("ipc", PSB_NOTIFY_LISTENER);
  psb_error err{};
  psb_context *ctx = zmq_driver().open(&run.cfg, &err);
  ASSERT_NE(ctx, nullptr) << err.message;
  auto ignore = [](void *, const void *, size_t) {};
  ASSERT_NE(zmq_driver().create_writer(ctx, run.topic("data").c_str(), &err), nullptr)
      << err.message;
  ASSERT_NE(zmq_driver().create_reader(ctx, run.topic("data").c_str(), ignore, nullptr, &err),
            nullptr)
      << err.message;
  zmq_driver().close(ctx);
  struct stat st {};
  EXPECT_NE(stat(("/tmp/psbench-zeromq-" + run.run_id).c_str(), &st), 0);
}

// inproc connects sockets of one process only: between processes it would wait for a
// peer that can never come, until the match timeout. Refused up front instead.
TEST(ZeromqDriver, InprocIsRefusedWhenThePeersAreOtherProcesses) {
  ZmqRun run("inproc");
  run.cfg.intra_process = 0;
  ASSERT_NE(psb_test::check(zmq_driver(), &run.cfg, &run.err), 0);
  EXPECT_NE(std::string(run.err.message).find("--placement intra"), std::string::npos)
      << run.err.message;
  run.cfg.intra_process = 1;
  EXPECT_EQ(psb_test::check(zmq_driver(), &run.cfg, &run.err), 0) << run.err.message;
  ZmqRun tcp("tcp");
  tcp.cfg.intra_process = 0;
  EXPECT_EQ(psb_test::check(zmq_driver(), &tcp.cfg, &tcp.err), 0) << tcp.err.message;
}

// ZeroMQ cannot tell when a PUB's queue is empty, so the driver has no drain; its
// writers linger (ZMQ_LINGER, up to 10 s) instead: what is still queued when the writer and its
// context close goes out before zmq_ctx_term returns. Unbounded queues (hwm 0), 32 MiB
// written back to back, the writer closed at once: the reader gets every message.
// (With ZMQ_LINGER 0 the reader got 691 and 878 of the 2,000 over tcp.)
TEST(ZeromqDriver, WhatIsQueuedWhenTheWriterClosesStillArrives) {
  for (const char *transport : {"tcp", "ipc"}) {
    SCOPED_TRACE(transport);
    ZmqRun run(transport, PSB_NOTIFY_WAIT, {{"sndhwm", "0"}, {"rcvhwm", "0"}});
    psb_context *ctx_w = run.open(), *ctx_r = run.open();
    psb_writer *w = run.writer(ctx_w, run.topic("close"));
    psb_reader *r = run.reader(ctx_r, run.topic("close"));
    ASSERT_TRUE(w && r) << run.err.message;
    ASSERT_TRUE(matched(w, r));
    const uint32_t sent = 2000;
    auto m = message(16384, 0);
    for (uint32_t i = 0; i < sent; ++i) {
      std::memcpy(m.data(), &i, sizeof i);
      ASSERT_EQ(zmq_driver().write(w, m.data(), m.size(), &run.err), 0) << run.err.message;
    }
    run.drop_writer(w);
    zmq_driver().close(ctx_w);
    std::erase(run.contexts, ctx_w);
    auto seqs = drain(r);
    ASSERT_EQ(seqs.size(), sent);
    for (uint32_t i = 0; i < sent; ++i) ASSERT_EQ(seqs[i], i);
  }
}

namespace {

std::vector<std::pair<std::string, std::string>> refusals_of(const psb_config &cfg) {
  return psb_test::refusals(zmq_driver(), cfg);
}

}  // namespace

TEST(ZeromqHosts, OnlyTcpCrossesHostsAndEveryRefusalNamesHosts) {
  EXPECT_EQ(zmq_driver().caps.crosses_hosts, 1u);
  const char *const peers[] = {"198.18.0.2", nullptr};
  for (const char *transport : {"ipc", "inproc"}) {
    ZmqRun run(transport);
    run.cfg.local_address = "198.18.0.1";
    run.cfg.peer_addresses = peers;
    auto got = refusals_of(run.cfg);
    ASSERT_EQ(got.size(), 1u) << transport;
    EXPECT_EQ(got[0].first, "hosts");
    EXPECT_NE(got[0].second.find("use --transport tcp"), std::string::npos) << got[0].second;
    EXPECT_EQ(zmq_driver().open(&run.cfg, &run.err), nullptr);
  }
  ZmqRun tcp("tcp");
  tcp.cfg.local_address = "198.18.0.1";
  tcp.cfg.peer_addresses = peers;
  EXPECT_TRUE(refusals_of(tcp.cfg).empty());
  const char *const none[] = {nullptr};
  tcp.cfg.peer_addresses = none;
  auto got = refusals_of(tcp.cfg);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "hosts");
  EXPECT_NE(got[0].second.find("--peer ADDRESS"), std::string::npos) << got[0].second;
}

TEST(ZeromqHosts, TcpBindsTheLocalAddressAndConnectsToEveryPeer) {
  // Hosts on one machine: the writer's "host" is 127.0.0.7, the reader's 127.0.0.8, whose
  // peers are a host without the writer (127.0.0.9: refused, retried) and the writer's.
  const std::string run_id = fresh_run_id();
  const char *const writer_peers[] = {"127.0.0.8", nullptr};
  const char *const reader_peers[] = {"127.0.0.9", "127.0.0.7", nullptr};
  ZmqRun w_run("tcp", PSB_NOTIFY_WAIT, {}, psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, run_id);
  ZmqRun r_run("tcp", PSB_NOTIFY_WAIT, {}, psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, run_id);
  w_run.cfg.intra_process = r_run.cfg.intra_process = 0;
  w_run.cfg.local_address = "127.0.0.7";
  w_run.cfg.peer_addresses = writer_peers;
  r_run.cfg.local_address = "127.0.0.8";
  r_run.cfg.peer_addresses = reader_peers;
  psb_context *ctx_w = w_run.open(), *ctx_r = r_run.open();
  ASSERT_TRUE(ctx_w && ctx_r) << w_run.err.message << r_run.err.message;
  const std::string topic = w_run.topic("data");
  psb_reader *reader = r_run.reader(ctx_r, topic);
  psb_writer *writer = w_run.writer(ctx_w, topic);
  ASSERT_TRUE(reader && writer) << w_run.err.message << r_run.err.message;
  ASSERT_TRUE(matched(writer, reader));
  EXPECT_EQ(zmq_driver().matched_writers(reader), 1);
  // Bound on the local address only. ping, pong, data: slots 0, 1, 2 of the run's block.
  const unsigned port = 20000 + 8 * (fnv1a(run_id) % 1536) + 2;
  EXPECT_TRUE(accepts_tcp(port, "127.0.0.7"));
  EXPECT_FALSE(accepts_tcp(port, "127.0.0.1"));
  auto sent = message(1000, 42);
  ASSERT_EQ(zmq_driver().write(writer, sent.data(), sent.size(), &w_run.err), 0);
  EXPECT_EQ(take_one(reader, PSB_NOTIFY_WAIT), sent);
}
