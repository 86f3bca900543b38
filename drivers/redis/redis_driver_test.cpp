// The redis driver through its ABI table, against a real redis-server the test starts
// itself (redis_test_server.hpp), and looked at from outside with a plain hiredis client.
#include <gtest/gtest.h>
#include <hiredis.h>
#include <psbench/driver.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "redis_test_endpoints.hpp"
#include "redis_test_server.hpp"
#include "test_received.hpp"
#include "test_signal.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMiB = 1u << 20;

const psb_driver &redis() { return psb_test::driver_under_test(); }

// One server for the tests that leave it as they found it; tests that kill, stop or
// reconfigure a server start their own.
psb_test::RedisServer &shared_server() {
  static psb_test::RedisServer server;
  return server;
}

std::string contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos ? "" : "'" + part + "' not in: " + s;
}

// Best effort and volatile: the pub/sub path.
struct Config : psb_test::RedisConfig {
  explicit Config(std::string broker, uint32_t notify = PSB_NOTIFY_WAIT,
                  const char *run_id = "redistest", uint64_t max_payload = 4 * kMiB)
      : RedisConfig(std::move(broker), notify, psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, run_id,
                    max_payload) {}
};

using psb_test::Endpoints;

std::vector<uint8_t> message(size_t size, uint8_t seed) {
  std::vector<uint8_t> m(size);
  for (size_t i = 0; i < size; ++i) m[i] = uint8_t(seed + i * 13 + (i >> 8));
  return m;
}

// Takes one message within 5 s (in the given notify mode); empty if none came.
std::vector<uint8_t> take_one(psb_reader *reader, uint32_t notify) {
  return psb_test::take_one(reader, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0);
}

redisReply *query(redisContext *c, const char *cmd) {
  return static_cast<redisReply *>(redisCommand(c, cmd));
}

}  // namespace

TEST(RedisDriver, DeclaresOnlyWhatRedisProvides) {
  const psb_driver &d = redis();
  EXPECT_STREQ(d.name, "redis");
  // best_effort: pub/sub (volatile); reliable: streams (volatile, or persistent in the
  // server's append-only file); check() refuses best_effort with persistent.
  EXPECT_EQ(d.caps.reliability, uint32_t(PSB_BEST_EFFORT | PSB_RELIABLE));
  EXPECT_EQ(d.caps.durability, uint32_t(PSB_VOLATILE | PSB_PERSISTENT));
  EXPECT_EQ(d.caps.history, 0u);
  EXPECT_EQ(d.caps.notify, uint32_t(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  ASSERT_NE(d.caps.transports, nullptr);
  EXPECT_STREQ(d.caps.transports[0], "tcp");
  EXPECT_EQ(d.caps.transports[1], nullptr);
  EXPECT_STREQ(d.caps.option_keys[0], "broker");
  // Declared so that check() can say why it refuses them (hiredis 0.14.1 has no TLS).
  EXPECT_STREQ(d.caps.option_keys[1], "security");
  EXPECT_STREQ(d.caps.option_keys[2], "security_dir");
  EXPECT_EQ(d.caps.option_keys[3], nullptr);
  EXPECT_EQ(d.caps.max_payload, 4194304u);
  EXPECT_EQ(d.loan, nullptr);
  EXPECT_NE(d.matched_readers, nullptr);
  EXPECT_EQ(d.matched_writers, nullptr);  // Redis cannot tell who publishes
  const std::string header = std::to_string(HIREDIS_MAJOR) + "." + std::to_string(HIREDIS_MINOR) +
                             "." + std::to_string(HIREDIS_PATCH);
  EXPECT_EQ(contains(d.version(), header + " (hiredis header)"), "");
}

struct Refusal {
  const char *name;
  void (*change)(psb_config &);
  const char *message;
};

void PrintTo(const Refusal &r, std::ostream *os) { *os << r.name; }

class RedisRefusal : public testing::TestWithParam<Refusal> {};

TEST_P(RedisRefusal, CheckAndOpenSayWhy) {
  Config c("127.0.0.1:1");  // valid, and nothing listens there
  GetParam().change(c.cfg);
  psb_error err{};
  EXPECT_NE(psb_test::check(redis(), &c.cfg, &err), 0);
  EXPECT_EQ(contains(err.message, GetParam().message), "");
  psb_error open_err{};
  EXPECT_EQ(redis().open(&c.cfg, &open_err), nullptr);
  EXPECT_STREQ(open_err.message, err.message);
}

psb_option g_bad_broker[] = {{"broker", "localhost"},       {"broker", "127.0.0.1:0"},
                             {"broker", "127.0.0.1:65536"}, {"broker", ":6379"},
                             {"broker", "::1:6379"},        {"broker", "127.0.0.1:63x9"}};

INSTANTIATE_TEST_SUITE_P(
    Settings, RedisRefusal,
    testing::Values(
        Refusal{"no_broker", [](psb_config &c) { c.option_count = 0; },
                "redis: option broker=HOST:PORT is missing; psbench sets it when it starts "
                "redis-server"},
        Refusal{"broker_without_port", [](psb_config &c) { c.options = &g_bad_broker[0]; },
                "option broker='localhost' is not HOST:PORT"},
        Refusal{"broker_port_0", [](psb_config &c) { c.options = &g_bad_broker[1]; },
                "option broker='127.0.0.1:0' is not HOST:PORT"},
        Refusal{"broker_port_too_big", [](psb_config &c) { c.options = &g_bad_broker[2]; },
                "port 1 to 65535"},
        Refusal{"broker_without_host", [](psb_config &c) { c.options = &g_bad_broker[3]; },
                "option broker=':6379' is not HOST:PORT"},
        Refusal{"bare_ipv6", [](psb_config &c) { c.options = &g_bad_broker[4]; }, "[::1]:6379"},
        Refusal{"port_not_a_number", [](psb_config &c) { c.options = &g_bad_broker[5]; },
                "is not HOST:PORT"},
        Refusal{"persistent_best_effort", [](psb_config &c) { c.qos.durability = PSB_PERSISTENT; },
                "redis: durability persistent needs reliability reliable: "},
        Refusal{"transient_local", [](psb_config &c) { c.qos.durability = PSB_TRANSIENT_LOCAL; },
                "durability 'transient_local' is not supported: Redis pub/sub stores no message, "
                "and a stream reader starts after the last entry"},
        Refusal{"keep_last",
                [](psb_config &c) {
                  c.qos.history = PSB_KEEP_LAST;
                  c.qos.history_depth = 8;
                },
                "history 'keep_last' is not supported: Redis pub/sub keeps no history"},
        Refusal{"keep_all", [](psb_config &c) { c.qos.history = PSB_KEEP_ALL; },
                "history 'keep_all' is not supported"},
        Refusal{"transport", [](psb_config &c) { c.transport = "udp"; },
                "transport 'udp' is not supported; this driver supports tcp"},
        Refusal{"too_large", [](psb_config &c) { c.max_payload = 4 * kMiB + 1; },
                "size 4194305 bytes is over this driver's largest message of 4194304 bytes"},
        Refusal{"loan", [](psb_config &c) { c.use_loan = 1; }, "--loan is not supported"}),
    [](const testing::TestParamInfo<Refusal> &info) { return std::string(info.param.name); });

TEST(RedisDriver, CheckAcceptsABrokerAddressWithoutConnecting) {
  for (const char *broker : {"127.0.0.1:1", "[::1]:6379", "redis.example:6380"}) {
    Config c(broker);
    psb_error err{};
    EXPECT_EQ(psb_test::check(redis(), &c.cfg, &err), 0) << broker << ": " << err.message;
  }
}

TEST(RedisDriver, OpenWithoutAServerFailsAndSaysWhere) {
  Config c("127.0.0.1:1");  // nothing listens on port 1
  psb_error err{};
  EXPECT_EQ(redis().open(&c.cfg, &err), nullptr);
  EXPECT_EQ(contains(err.message, "redis: cannot connect the probe to redis-server at 127.0.0.1:1"),
            "");
}

TEST(RedisDriver, VersionAddsTheServersOnceConnected) {
  Endpoints e(Config(shared_server().address()));
  ASSERT_NE(e.ctx, nullptr) << e.err.message;
  redisContext *c = shared_server().client();
  redisReply *info = query(c, "INFO server");
  ASSERT_EQ(info->type, REDIS_REPLY_STRING);
  std::string text(info->str, info->len);
  freeReplyObject(info);
  redisFree(c);
  const size_t at = text.find("redis_version:") + 14;
  const std::string server = text.substr(at, text.find('\r', at) - at);
  EXPECT_EQ(contains(redis().version(), "(hiredis header); server redis " + server), "");
}

TEST(RedisDriver, WaitAndPollDeliverExactBytesUpToFourMiB) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Config c(shared_server().address(), notify);
    Endpoints e(c);
    ASSERT_NE(e.ctx, nullptr) << e.err.message;
    e.reader = redis().create_reader(e.ctx, "psb_redistest_a", nullptr, nullptr, &e.err);
    e.writer = redis().create_writer(e.ctx, "psb_redistest_a", &e.err);
    ASSERT_TRUE(e.reader && e.writer) << e.err.message;
    for (size_t size : {size_t(32), size_t(64), size_t(1000), size_t(16384), size_t(65536),
                        size_t(262145), size_t(kMiB), size_t(4 * kMiB)}) {
      auto sent = message(size, uint8_t(size));
      ASSERT_EQ(redis().write(e.writer, sent.data(), sent.size(), &e.err), 0) << e.err.message;
      auto got = take_one(e.reader, notify);
      ASSERT_EQ(got.size(), size) << "notify " << notify;
      EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
    }
  }
}

TEST(RedisDriver, TakeReturnsNothingWhenNothingWasPublished) {
  Config c(shared_server().address());
  Endpoints e(c);
  ASSERT_NE(e.ctx, nullptr) << e.err.message;
  e.reader = redis().create_reader(e.ctx, "psb_redistest_b", nullptr, nullptr, &e.err);
  ASSERT_NE(e.reader, nullptr) << e.err.message;
  psb_test::expect_nothing_to_take(e.reader, 20'000'000);
}

TEST(RedisDriver, TheSubscriptionIsActiveWhenCreateReaderReturns) {
  // Separate contexts, as in two processes; no waiting between subscribe and publish.
  Config c(shared_server().address());
  for (int i = 0; i < 20; ++i) {
    const std::string topic = "psb_redistest_first" + std::to_string(i);
    Endpoints sub(c), pub(c);
    ASSERT_TRUE(sub.ctx && pub.ctx) << sub.err.message << pub.err.message;
    pub.writer = redis().create_writer(pub.ctx, topic.c_str(), &pub.err);
    sub.reader = redis().create_reader(sub.ctx, topic.c_str(), nullptr, nullptr, &sub.err);
    ASSERT_TRUE(pub.writer && sub.reader) << pub.err.message << sub.err.message;
    EXPECT_EQ(redis().matched_readers(pub.writer), 1);  // at once, no waiting
    auto first = message(100, uint8_t(i));
    ASSERT_EQ(redis().write(pub.writer, first.data(), first.size(), &pub.err), 0);
    EXPECT_TRUE(take_one(sub.reader, PSB_NOTIFY_WAIT) == first) << "round " << i;
  }
}

TEST(RedisDriver, MatchedReadersIsTheServersSubscriberCount) {
  Config c(shared_server().address());
  Endpoints pub(c), a(c), b(c);
  ASSERT_TRUE(pub.ctx && a.ctx && b.ctx);
  pub.writer = redis().create_writer(pub.ctx, "psb_redistest_m", &pub.err);
  ASSERT_NE(pub.writer, nullptr) << pub.err.message;
  EXPECT_EQ(redis().matched_readers(pub.writer), 0);
  a.reader = redis().create_reader(a.ctx, "psb_redistest_m", nullptr, nullptr, &a.err);
  EXPECT_EQ(redis().matched_readers(pub.writer), 1);
  b.reader = redis().create_reader(b.ctx, "psb_redistest_m", nullptr, nullptr, &b.err);
  EXPECT_EQ(redis().matched_readers(pub.writer), 2);
  // A reader of another topic is not counted.
  Endpoints other(c);
  other.reader = redis().create_reader(other.ctx, "psb_redistest_n", nullptr, nullptr, &other.err);
  EXPECT_EQ(redis().matched_readers(pub.writer), 2);
  // Both readers get every message (fan-out), with writes in between the counts.
  auto m = message(500, 7);
  ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0);
  EXPECT_EQ(redis().matched_readers(pub.writer), 2);
  EXPECT_TRUE(take_one(a.reader, PSB_NOTIFY_WAIT) == m);
  EXPECT_TRUE(take_one(b.reader, PSB_NOTIFY_WAIT) == m);
  // The server drops a closed subscriber's subscription once it sees the close.
  redis().destroy_reader(b.reader);
  b.reader = nullptr;
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (redis().matched_readers(pub.writer) != 1 && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(redis().matched_readers(pub.writer), 1);
}

TEST(RedisDriver, ChannelsCarryTheRunIdSoRunsNeverCrossTalk) {
  Config run_a(shared_server().address(), PSB_NOTIFY_WAIT, "runA");
  Config run_b(shared_server().address(), PSB_NOTIFY_WAIT, "runB");
  Endpoints a(run_a), b(run_b);
  a.reader = redis().create_reader(a.ctx, "psb_same_topic", nullptr, nullptr, &a.err);
  b.writer = redis().create_writer(b.ctx, "psb_same_topic", &b.err);
  b.reader = redis().create_reader(b.ctx, "psb_same_topic", nullptr, nullptr, &b.err);
  ASSERT_TRUE(a.reader && b.writer && b.reader);
  redisContext *c = shared_server().client();
  redisReply *channels = query(c, "PUBSUB CHANNELS psbench:run?:psb_same_topic");
  ASSERT_EQ(channels->type, REDIS_REPLY_ARRAY);
  std::vector<std::string> names;
  for (size_t i = 0; i < channels->elements; ++i) names.emplace_back(channels->element[i]->str);
  freeReplyObject(channels);
  redisFree(c);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"psbench:runA:psb_same_topic",
                                             "psbench:runB:psb_same_topic"}));
  EXPECT_EQ(redis().matched_readers(b.writer), 1);
  auto m = message(64, 1);
  ASSERT_EQ(redis().write(b.writer, m.data(), m.size(), &b.err), 0);
  EXPECT_TRUE(take_one(b.reader, PSB_NOTIFY_WAIT) == m);
  const void *data;
  size_t len;
  EXPECT_EQ(redis().take(a.reader, 200'000'000, &data, &len, &a.err), 0);
}

TEST(RedisDriver, BackToBackBurstsArriveCompleteAndInOrder) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Config c(shared_server().address(), notify);
    Endpoints pub(c), sub(c);
    sub.reader = redis().create_reader(sub.ctx, "psb_redistest_burst", nullptr, nullptr, &sub.err);
    pub.writer = redis().create_writer(pub.ctx, "psb_redistest_burst", &pub.err);
    ASSERT_TRUE(sub.reader && pub.writer);
    // 3000 small then 8 of 4 MiB, written before anything is taken: the subscriber's
    // output buffer in the server holds them (32 MiB, under the 128 MiB soft limit).
    std::vector<size_t> sizes(3000, 1024);
    sizes.insert(sizes.end(), 8, 4 * kMiB);
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto m = message(sizes[i], uint8_t(i));
      std::memcpy(m.data(), &i, sizeof i);
      ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0) << pub.err.message;
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto got = take_one(sub.reader, notify);
      ASSERT_EQ(got.size(), sizes[i]) << "message " << i;
      auto want = message(sizes[i], uint8_t(i));
      std::memcpy(want.data(), &i, sizeof i);
      ASSERT_TRUE(got == want) << "message " << i;
    }
    const void *data;
    size_t len;
    EXPECT_EQ(redis().take(sub.reader, 0, &data, &len, &sub.err), 0);
  }
}

TEST(RedisDriver, ASampleStaysValidUntilReleaseOrTheNextTake) {
  Config c(shared_server().address());
  Endpoints e(c);
  e.reader = redis().create_reader(e.ctx, "psb_redistest_keep", nullptr, nullptr, &e.err);
  e.writer = redis().create_writer(e.ctx, "psb_redistest_keep", &e.err);
  ASSERT_TRUE(e.reader && e.writer);
  auto first = message(70000, 3), second = message(70000, 4);
  ASSERT_EQ(redis().write(e.writer, first.data(), first.size(), &e.err), 0);
  ASSERT_EQ(redis().write(e.writer, second.data(), second.size(), &e.err), 0);
  const void *data = nullptr;
  size_t len = 0;
  ASSERT_EQ(redis().take(e.reader, 2'000'000'000, &data, &len, &e.err), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the second one is in by now
  ASSERT_EQ(len, first.size());
  EXPECT_EQ(std::memcmp(data, first.data(), len), 0);
  redis().release(e.reader);
  redis().release(e.reader);  // twice is harmless
  ASSERT_EQ(redis().take(e.reader, 2'000'000'000, &data, &len, &e.err), 1);
  EXPECT_EQ(len, second.size());
  EXPECT_EQ(std::memcmp(data, second.data(), len), 0);
}

TEST(RedisDriver, ListenerGetsEveryMessageInOrderAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<std::vector<uint8_t>> messages;
  } seen;
  Config c(shared_server().address(), PSB_NOTIFY_LISTENER);
  Endpoints sub(c), pub(c);
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::lock_guard lock(s->mu);
    s->messages.emplace_back((const uint8_t *)data, (const uint8_t *)data + len);
  };
  sub.reader = redis().create_reader(sub.ctx, "psb_redistest_l", cb, &seen, &sub.err);
  pub.writer = redis().create_writer(pub.ctx, "psb_redistest_l", &pub.err);
  ASSERT_TRUE(sub.reader && pub.writer) << sub.err.message << pub.err.message;
  std::vector<std::vector<uint8_t>> sent;
  for (size_t i = 0; i < 200; ++i)
    sent.push_back(message(i == 100 ? 4 * kMiB : 32 + i, uint8_t(i)));
  for (auto &m : sent) ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0);
  const auto end = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    {
      std::lock_guard lock(seen.mu);
      if (seen.messages.size() >= sent.size() || Clock::now() > end) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  redis().destroy_reader(sub.reader);  // joins the listener, which is waiting
  sub.reader = nullptr;
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.messages.size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) EXPECT_TRUE(seen.messages[i] == sent[i]) << i;
}

TEST(RedisDriver, ListenerAndTakeAreNotMixed) {
  Config listener(shared_server().address(), PSB_NOTIFY_LISTENER);
  Endpoints e(listener);
  auto cb = [](void *, const void *, size_t) {};
  psb_error err{};
  EXPECT_EQ(redis().create_reader(e.ctx, "psb_redistest_x", nullptr, nullptr, &err), nullptr);
  EXPECT_EQ(contains(err.message, "on_data must be given exactly in listener mode"), "");
  e.reader = redis().create_reader(e.ctx, "psb_redistest_x", cb, nullptr, &e.err);
  ASSERT_NE(e.reader, nullptr);
  const void *data;
  size_t len;
  EXPECT_EQ(redis().take(e.reader, 0, &data, &len, &err), -1);
  EXPECT_EQ(contains(err.message, "take() is not used in listener mode"), "");
  Config wait(shared_server().address(), PSB_NOTIFY_WAIT);
  Endpoints w(wait);
  EXPECT_EQ(redis().create_reader(w.ctx, "psb_redistest_x", cb, nullptr, &err), nullptr);
}

// Two contexts echoing through the server as ping and pong do: the pong side writes
// from its listener thread.
TEST(RedisDriver, EchoFromAListenerCallback) {
  struct Pong {
    psb_writer *writer = nullptr;
    std::atomic<int> failures{0};
  } pong;
  Config listener(shared_server().address(), PSB_NOTIFY_LISTENER);
  Config wait(shared_server().address(), PSB_NOTIFY_WAIT);
  Endpoints pong_ep(listener), ping_ep(wait);
  pong_ep.writer = redis().create_writer(pong_ep.ctx, "psb_redistest_pong", &pong_ep.err);
  pong.writer = pong_ep.writer;
  auto echo = [](void *user, const void *data, size_t len) {
    auto *p = static_cast<Pong *>(user);
    psb_error err;
    if (redis().write(p->writer, data, len, &err) != 0) ++p->failures;
  };
  pong_ep.reader =
      redis().create_reader(pong_ep.ctx, "psb_redistest_ping", echo, &pong, &pong_ep.err);
  ping_ep.writer = redis().create_writer(ping_ep.ctx, "psb_redistest_ping", &ping_ep.err);
  ping_ep.reader =
      redis().create_reader(ping_ep.ctx, "psb_redistest_pong", nullptr, nullptr, &ping_ep.err);
  ASSERT_TRUE(pong_ep.reader && pong_ep.writer && ping_ep.reader && ping_ep.writer);
  for (int i = 0; i < 300; ++i) {
    auto m = message(i % 3 == 0 ? 16384 : 64, uint8_t(i));
    ASSERT_EQ(redis().write(ping_ep.writer, m.data(), m.size(), &ping_ep.err), 0);
    ASSERT_TRUE(take_one(ping_ep.reader, PSB_NOTIFY_WAIT) == m) << "round trip " << i;
  }
  EXPECT_EQ(pong.failures.load(), 0);
}

TEST(RedisDriver, AnInterruptedWaitReturnsNoSample) {
  Config c(shared_server().address());
  Endpoints e(c);
  e.reader = redis().create_reader(e.ctx, "psb_redistest_intr", nullptr, nullptr, &e.err);
  ASSERT_NE(e.reader, nullptr);
  const auto got = psb_test::interrupted_take(e.reader, 60'000'000'000);
  EXPECT_EQ(got.result, 0);
  EXPECT_LT(got.took, std::chrono::seconds(30)) << "the signal did not end the 60 s wait";
}

TEST(RedisDriver, AKilledServerFailsWritesAndTakesInsteadOfHanging) {
  psb_test::RedisServer server;
  Config wait(server.address(), PSB_NOTIFY_WAIT), poll(server.address(), PSB_NOTIFY_POLL),
      listener(server.address(), PSB_NOTIFY_LISTENER);
  Endpoints w(wait), p(poll), l(listener);
  ASSERT_TRUE(w.ctx && p.ctx && l.ctx);
  w.writer = redis().create_writer(w.ctx, "psb_redistest_k", &w.err);
  w.reader = redis().create_reader(w.ctx, "psb_redistest_k", nullptr, nullptr, &w.err);
  p.reader = redis().create_reader(p.ctx, "psb_redistest_k", nullptr, nullptr, &p.err);
  std::atomic<int> heard{0};
  auto cb = [](void *user, const void *, size_t) { ++*static_cast<std::atomic<int> *>(user); };
  l.reader = redis().create_reader(l.ctx, "psb_redistest_k", cb, &heard, &l.err);
  ASSERT_TRUE(w.writer && w.reader && p.reader && l.reader);
  auto m = message(64, 9);
  ASSERT_EQ(redis().write(w.writer, m.data(), m.size(), &w.err), 0);
  ASSERT_TRUE(take_one(w.reader, PSB_NOTIFY_WAIT) == m);
  ASSERT_TRUE(take_one(p.reader, PSB_NOTIFY_POLL) == m);

  server.kill9();
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(redis().take(w.reader, 5'000'000'000, &data, &len, &err), -1);
  EXPECT_EQ(contains(err.message,
                     "closed the subscriber connection of psbench:redistest:psb_redistest_k"),
            "");
  int r = 0;
  const auto end = Clock::now() + std::chrono::seconds(5);
  while ((r = redis().take(p.reader, 0, &data, &len, &err)) == 0 && Clock::now() < end) {
  }
  EXPECT_EQ(r, -1);
  EXPECT_EQ(contains(err.message, "redis-server at " + server.address() + " closed"), "");
  // The first write after the kill sees the closed connection (its earlier PUBLISH
  // replies are read before each write); later ones keep failing.
  psb_error werr{};
  EXPECT_EQ(redis().write(w.writer, m.data(), m.size(), &werr), -1);
  EXPECT_EQ(contains(werr.message, "closed the publisher connection"), "");
  EXPECT_EQ(redis().write(w.writer, m.data(), m.size(), &werr), -1);
  EXPECT_EQ(redis().matched_readers(w.writer), -1);
  // A new context cannot open either.
  psb_error open_err{};
  EXPECT_EQ(redis().open(&wait.cfg, &open_err), nullptr);
  EXPECT_EQ(contains(open_err.message, "cannot connect"), "");
}

TEST(RedisDriver, AStoppedServerFailsAWriteAfterTheIoTimeout) {
  psb_test::RedisServer server;
  Config c(server.address());
  Endpoints e(c);
  e.writer = redis().create_writer(e.ctx, "psb_redistest_stop", &e.err);
  ASSERT_NE(e.writer, nullptr);
  server.pause();  // SIGSTOP: the connection stays up, nothing is read
  auto m = message(4 * kMiB, 1);
  psb_error err{};
  int r = 0;
  const auto start = Clock::now();
  for (int i = 0; i < 100 && r == 0; ++i) r = redis().write(e.writer, m.data(), m.size(), &err);
  const auto took = Clock::now() - start;
  server.resume();
  EXPECT_EQ(r, -1);
  EXPECT_EQ(contains(err.message, "did not take the message within 10 s"), "");
  EXPECT_LT(took, std::chrono::seconds(60));
}

TEST(RedisDriver, ASubscriberOverTheOutputBufferLimitIsDroppedAndSaysSo) {
  psb_test::RedisServer server;
  redisContext *admin = server.client();
  auto *set = static_cast<redisReply *>(
      redisCommand(admin, "CONFIG SET client-output-buffer-limit %s", "pubsub 1mb 1mb 0"));
  ASSERT_EQ(set->type, REDIS_REPLY_STATUS) << set->str;
  freeReplyObject(set);
  redisFree(admin);
  Config c(server.address());
  Endpoints pub(c), sub(c);
  sub.reader = redis().create_reader(sub.ctx, "psb_redistest_slow", nullptr, nullptr, &sub.err);
  pub.writer = redis().create_writer(pub.ctx, "psb_redistest_slow", &pub.err);
  ASSERT_TRUE(sub.reader && pub.writer);
  auto m = message(4 * kMiB, 2);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0);
  // What reached the socket before the cut may still be taken; then the error.
  const void *data;
  size_t len;
  psb_error err{};
  int r, taken = 0;
  while ((r = redis().take(sub.reader, 5'000'000'000, &data, &len, &err)) == 1) ++taken;
  EXPECT_EQ(r, -1);
  EXPECT_LT(taken, 8);
  EXPECT_EQ(contains(err.message, "client-output-buffer-limit pubsub"), "");
}

TEST(RedisDriver, CloseTearsDownEndpointsLeftBehind) {
  Config c(shared_server().address(), PSB_NOTIFY_LISTENER);
  psb_error err{};
  psb_context *ctx = redis().open(&c.cfg, &err);
  ASSERT_NE(ctx, nullptr);
  auto cb = [](void *, const void *, size_t) {};
  ASSERT_NE(redis().create_reader(ctx, "psb_redistest_left", cb, nullptr, &err), nullptr);
  psb_writer *w = redis().create_writer(ctx, "psb_redistest_left", &err);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(redis().matched_readers(w), 1);
  redis().close(ctx);  // stops the listener, closes both connections
  Config probe(shared_server().address());
  Endpoints e(probe);
  e.writer = redis().create_writer(e.ctx, "psb_redistest_left", &e.err);
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (redis().matched_readers(e.writer) != 0 && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(redis().matched_readers(e.writer), 0);
}
