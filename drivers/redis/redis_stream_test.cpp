// reliability reliable (Redis Streams) through the driver's ABI table, against real
// redis-servers the test starts (redis_test_server.hpp), durable ones (the manifest's
// durable_config) killed with SIGKILL mid-stream and started again on the same port and
// data. Every message carries its index, so what arrives is checked against a known answer.
#include <gtest/gtest.h>
#include <hiredis.h>
#include <psbench/driver.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "redis_test_endpoints.hpp"
#include "redis_test_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const psb_driver &redis() { return psb_test::driver_under_test(); }

std::string contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos ? "" : "'" + part + "' not in: " + s;
}

// Reliable (Redis Streams), with the durability given.
struct StreamConfig : psb_test::RedisConfig {
  StreamConfig(const std::string &broker, uint32_t notify, uint32_t durability,
               const char *run_id = "streamtest", uint64_t max_payload = 4096)
      : RedisConfig(broker, notify, psb_qos{PSB_RELIABLE, durability, 0, 0}, run_id, max_payload) {}
};

using psb_test::Endpoints;

// Message i: its index in the first 4 bytes, then a pattern of it, size bytes in all.
std::vector<uint8_t> numbered(uint32_t i, size_t size = 100) {
  std::vector<uint8_t> m(size);
  std::memcpy(m.data(), &i, 4);
  for (size_t k = 4; k < size; ++k) m[k] = uint8_t(i * 7 + k);
  return m;
}

// The index of a message numbered() made, or -1 if its bytes are not one.
int64_t index_of(const void *data, size_t len, size_t size = 100) {
  if (len != size) return -1;
  uint32_t i;
  std::memcpy(&i, data, 4);
  return numbered(i, size) ==
                 std::vector<uint8_t>((const uint8_t *)data, (const uint8_t *)data + len)
             ? int64_t(i)
             : -1;
}

std::map<std::string, uint64_t> counters_of(psb_writer *w, psb_reader *r) {
  std::map<std::string, uint64_t> got;
  auto put = [](void *user, const char *name, uint64_t value) {
    (*static_cast<std::map<std::string, uint64_t> *>(user))[name] = value;
  };
  if (w) redis().writer_counters(w, put, &got);
  if (r) redis().reader_counters(r, put, &got);
  return got;
}

// Takes until `want` messages came or 10 s passed without one; every take must succeed.
std::vector<int64_t> take_all(psb_reader *reader, size_t want, uint32_t notify, int *errors) {
  std::vector<int64_t> got;
  auto quiet_until = Clock::now() + std::chrono::seconds(10);
  while (got.size() < want && Clock::now() < quiet_until) {
    const void *data;
    size_t len;
    psb_error err{};
    const int r =
        redis().take(reader, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0, &data, &len, &err);
    if (r < 0) {
      ++*errors;
      ADD_FAILURE() << err.message;
    }
    if (r == 1) {
      got.push_back(index_of(data, len));
      quiet_until = Clock::now() + std::chrono::seconds(10);
    } else if (notify == PSB_NOTIFY_POLL) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return got;
}

std::vector<int64_t> range(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

// Writes messages from..to-1; a write that fails is tried again (up to 10 s) once the
// writer has reconnected. Returns the write errors.
int write_range(psb_writer *w, uint32_t from, uint32_t to) {
  int errors = 0;
  for (uint32_t i = from; i < to; ++i) {
    const auto m = numbered(i);
    psb_error err{};
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    while (redis().write(w, m.data(), m.size(), &err) != 0) {
      ++errors;
      if (Clock::now() > give_up) {
        ADD_FAILURE() << "write " << i << " never succeeded: " << err.message;
        return errors;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return errors;
}

std::string config_get(redisContext *c, const char *name) {
  auto *r = static_cast<redisReply *>(redisCommand(c, "CONFIG GET %s", name));
  std::string v = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 ? r->element[1]->str : "?";
  if (r) freeReplyObject(r);
  return v;
}

long long integer(redisContext *c, const char *cmd, const char *key) {
  auto *r = static_cast<redisReply *>(redisCommand(c, cmd, key));
  const long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  if (r) freeReplyObject(r);
  return v;
}

}  // namespace

TEST(RedisStream, BestEffortWithPersistentIsRefused) {
  StreamConfig c("127.0.0.1:1", PSB_NOTIFY_WAIT, PSB_PERSISTENT);
  c.cfg.qos.reliability = PSB_BEST_EFFORT;
  psb_error err{};
  EXPECT_NE(psb_test::check(redis(), &c.cfg, &err), 0);
  EXPECT_EQ(contains(err.message, "redis: durability persistent needs reliability reliable: "), "");
  psb_error open_err{};
  EXPECT_EQ(redis().open(&c.cfg, &open_err), nullptr);
  EXPECT_STREQ(open_err.message, err.message);
}

TEST(RedisStream, ReliableVolatileAndPersistentAreAccepted) {
  for (uint32_t durability : {PSB_VOLATILE, PSB_PERSISTENT}) {
    StreamConfig c("127.0.0.1:1", PSB_NOTIFY_WAIT, durability);
    psb_error err{};
    EXPECT_EQ(psb_test::check(redis(), &c.cfg, &err), 0) << err.message;
  }
}

// The manifest's durable_config comes after the base lines (save "", appendonly no): the
// later lines are the ones in force, and the append-only file is in <dir>/data.
TEST(RedisStream, DurableConfigOverridesTheBaseLines) {
  psb_test::RedisServer server(true);
  redisContext *c = server.client();
  EXPECT_EQ(config_get(c, "appendonly"), "yes");
  EXPECT_EQ(config_get(c, "appendfsync"), "always");
  EXPECT_EQ(config_get(c, "appenddirname"), "data");
  EXPECT_EQ(config_get(c, "save"), "");
  redisFree(c);
  bool aof = false;
  for (const auto &f : std::filesystem::directory_iterator(server.dir() + "/data"))
    aof = aof || f.path().filename().string().find(".aof") != std::string::npos;
  EXPECT_TRUE(aof) << "no append-only file in " << server.dir() << "/data";
}

TEST(RedisStream, EveryMessageArrivesInOrderInEachNotifyMode) {
  psb_test::RedisServer server;
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    StreamConfig c(server.address(), notify, PSB_VOLATILE);
    Endpoints e(c);
    ASSERT_NE(e.ctx, nullptr) << e.err.message;
    const std::string topic = "psb_streamtest_order" + std::to_string(notify);
    e.writer = redis().create_writer(e.ctx, topic.c_str(), &e.err);
    ASSERT_NE(e.writer, nullptr) << e.err.message;
    // Written before the reader joined: not for it.
    ASSERT_EQ(write_range(e.writer, 100000, 100010), 0);
    ASSERT_EQ(redis().drain(e.writer, 5'000'000'000, &e.err), 1) << e.err.message;
    e.reader = redis().create_reader(e.ctx, topic.c_str(), nullptr, nullptr, &e.err);
    ASSERT_NE(e.reader, nullptr) << e.err.message;
    EXPECT_EQ(redis().matched_readers(e.writer), 1);
    ASSERT_EQ(write_range(e.writer, 0, 3000), 0);  // back to back, more than one XREAD's worth
    int errors = 0;
    EXPECT_EQ(take_all(e.reader, 3000, notify, &errors), range(0, 3000));
    EXPECT_EQ(errors, 0);
    ASSERT_EQ(redis().drain(e.writer, 5'000'000'000, &e.err), 1) << e.err.message;
    const auto k = counters_of(e.writer, nullptr);
    EXPECT_EQ(k.at("xadd_acknowledged"), 3010u);
    EXPECT_EQ(k.at("xadd_resent") + k.at("xadd_unsent") + k.at("xadd_refused") + k.at("reconnects"),
              0u);
  }
}

TEST(RedisStream, LargestMessagesArriveExactly) {
  psb_test::RedisServer server;
  StreamConfig c(server.address(), PSB_NOTIFY_WAIT, PSB_VOLATILE, "streamtest", 4194304);
  Endpoints e(c);
  ASSERT_NE(e.ctx, nullptr) << e.err.message;
  e.reader = redis().create_reader(e.ctx, "psb_streamtest_big", nullptr, nullptr, &e.err);
  e.writer = redis().create_writer(e.ctx, "psb_streamtest_big", &e.err);
  ASSERT_TRUE(e.reader && e.writer) << e.err.message;
  std::vector<std::vector<uint8_t>> sent;
  for (size_t size : {size_t(32), size_t(65536), size_t(4194304), size_t(4194304)}) {
    std::vector<uint8_t> m(size);
    for (size_t k = 0; k < size; ++k) m[k] = uint8_t(k * 13 + size);
    ASSERT_EQ(redis().write(e.writer, m.data(), m.size(), &e.err), 0) << e.err.message;
    sent.push_back(std::move(m));
  }
  for (const auto &m : sent) {
    const void *data = nullptr;
    size_t len = 0;
    int r = 0;
    const auto end = Clock::now() + std::chrono::seconds(10);
    while ((r = redis().take(e.reader, 100'000'000, &data, &len, &e.err)) == 0 &&
           Clock::now() < end) {
    }
    ASSERT_EQ(r, 1) << e.err.message;
    EXPECT_TRUE(std::vector<uint8_t>((const uint8_t *)data, (const uint8_t *)data + len) == m);
  }
}

TEST(RedisStream, MatchedReadersCountsTheTopicsStreamReaders) {
  psb_test::RedisServer server;
  StreamConfig c(server.address(), PSB_NOTIFY_WAIT, PSB_VOLATILE);
  Endpoints w(c), r1(c), r2(c), other(c);
  w.writer = redis().create_writer(w.ctx, "psb_streamtest_m", &w.err);
  ASSERT_NE(w.writer, nullptr) << w.err.message;
  EXPECT_EQ(redis().matched_readers(w.writer), 0);
  r1.reader = redis().create_reader(r1.ctx, "psb_streamtest_m", nullptr, nullptr, &r1.err);
  other.reader =
      redis().create_reader(other.ctx, "psb_streamtest_mx", nullptr, nullptr, &other.err);
  EXPECT_EQ(redis().matched_readers(w.writer), 1);
  r2.reader = redis().create_reader(r2.ctx, "psb_streamtest_m", nullptr, nullptr, &r2.err);
  EXPECT_EQ(redis().matched_readers(w.writer), 2);
  redis().destroy_reader(r1.reader);
  r1.reader = nullptr;
  const auto end = Clock::now() + std::chrono::seconds(5);
  while (redis().matched_readers(w.writer) != 1 && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(redis().matched_readers(w.writer), 1);
}

// The contract's test: a durable server killed (SIGKILL) mid-stream and started again on
// its port and data. Everything acknowledged before the kill is in its append-only file
// and reaches the reader, so does everything written after; writes while it is down fail;
// the reader never errors and gets nothing twice.
class RedisStreamRestart : public testing::TestWithParam<uint32_t> {};

TEST_P(RedisStreamRestart, AcknowledgedAndLaterMessagesSurviveASigkill) {
  const uint32_t notify = GetParam();
  psb_test::RedisServer server(true);
  StreamConfig c(server.address(), notify, PSB_PERSISTENT);
  Endpoints w(c), r(c);
  ASSERT_TRUE(w.ctx && r.ctx) << w.err.message;
  std::mutex mu;
  std::vector<int64_t> heard;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *h = static_cast<std::pair<std::mutex *, std::vector<int64_t> *> *>(user);
    std::lock_guard lock(*h->first);
    h->second->push_back(index_of(data, len));
  };
  std::pair<std::mutex *, std::vector<int64_t> *> sink{&mu, &heard};
  const bool listening = notify == PSB_NOTIFY_LISTENER;
  r.reader = redis().create_reader(r.ctx, "psb_streamtest_kill", listening ? +cb : nullptr,
                                   listening ? &sink : nullptr, &r.err);
  w.writer = redis().create_writer(w.ctx, "psb_streamtest_kill", &w.err);
  ASSERT_TRUE(r.reader && w.writer) << r.err.message << w.err.message;

  // 500 acknowledged, the reader takes only 200 of them before the kill.
  ASSERT_EQ(write_range(w.writer, 0, 500), 0);
  ASSERT_EQ(redis().drain(w.writer, 5'000'000'000, &w.err), 1) << w.err.message;
  int errors = 0;
  std::vector<int64_t> got;
  if (!listening) got = take_all(r.reader, 200, notify, &errors);
  server.kill9();

  // Down: the writer's ring (128 messages here) takes writes for later, then refuses
  // them; takes return what the reader's last batch holds, or no sample, and no error.
  ASSERT_EQ(write_range(w.writer, 500, 628), 0);
  const auto m = numbered(628);
  psb_error err{};
  EXPECT_EQ(redis().write(w.writer, m.data(), m.size(), &err), -1);
  EXPECT_EQ(contains(err.message, "redis-server at " + server.address() + " is unreachable"), "");
  EXPECT_EQ(contains(err.message, "this write was not accepted"), "");
  if (!listening) {
    const void *data;
    size_t len;
    for (int i = 0; i < 5; ++i) {
      psb_error terr{};
      const int t =
          redis().take(r.reader, notify == PSB_NOTIFY_WAIT ? 50'000'000 : 0, &data, &len, &terr);
      EXPECT_GE(t, 0) << terr.message;  // what its last batch still holds, or none
      if (t == 1) got.push_back(index_of(data, len));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  server.start_again();

  // The rest after the restart (a write may fail until the writer has reconnected and
  // sent its ring again).
  write_range(w.writer, 628, 1000);
  ASSERT_EQ(redis().drain(w.writer, 5'000'000'000, &w.err), 1) << w.err.message;
  if (listening) {
    const auto end = Clock::now() + std::chrono::seconds(20);
    for (;;) {
      {
        std::lock_guard lock(mu);
        if (heard.size() >= 1000 || Clock::now() > end) {
          got = heard;
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } else {
    const auto rest = take_all(r.reader, 1000 - got.size(), notify, &errors);
    got.insert(got.end(), rest.begin(), rest.end());
  }
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(got, range(0, 1000)) << "every message once, in order";
  const auto k = counters_of(w.writer, nullptr);
  EXPECT_EQ(k.at("xadd_acknowledged"), 1000u);
  EXPECT_EQ(k.at("xadd_resent"), 128u);
  EXPECT_EQ(k.at("xadd_unsent"), 0u);
  EXPECT_EQ(k.at("reconnects"), 1u);
  EXPECT_EQ(counters_of(nullptr, r.reader).at("reconnects"), 1u);
  redisContext *admin = server.client();
  EXPECT_EQ(integer(admin, "XLEN %s", "psbench:streamtest:psb_streamtest_kill"), 1000);
  redisFree(admin);
}

INSTANTIATE_TEST_SUITE_P(Notify, RedisStreamRestart,
                         testing::Values(PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER),
                         [](const testing::TestParamInfo<uint32_t> &i) {
                           return i.param == PSB_NOTIFY_WAIT   ? std::string("wait")
                                  : i.param == PSB_NOTIFY_POLL ? std::string("poll")
                                                               : std::string("listener");
                         });

// Killed while XADDs are in flight (no drain): the server's file holds every XADD it
// answered and perhaps some it had not answered yet, never fewer; the reader gets
// exactly what the stream holds, once each, in order.
TEST(RedisStream, AKillWithXaddsInFlightLosesOnlyUnacknowledgedOnes) {
  psb_test::RedisServer server(true);
  StreamConfig c(server.address(), PSB_NOTIFY_WAIT, PSB_PERSISTENT);
  Endpoints w(c), r(c);
  r.reader = redis().create_reader(r.ctx, "psb_streamtest_flight", nullptr, nullptr, &r.err);
  w.writer = redis().create_writer(w.ctx, "psb_streamtest_flight", &w.err);
  ASSERT_TRUE(r.reader && w.writer) << r.err.message << w.err.message;
  std::atomic<bool> stop{false};
  std::atomic<uint32_t> accepted{0};
  std::thread writer([&] {
    for (uint32_t i = 0; !stop.load() && i < 1000000; ++i) {
      const auto m = numbered(i);
      psb_error err{};
      if (redis().write(w.writer, m.data(), m.size(), &err) != 0) break;
      accepted = i + 1;
    }
  });
  const auto end = Clock::now() + std::chrono::seconds(20);
  while (accepted.load() < 2000 && Clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (accepted.load() < 2000) {
    stop = true;
    writer.join();
    FAIL() << "only " << accepted.load() << " writes accepted";
  }
  server.kill9();
  writer.join();  // it stops at its first refused write: its ring is full
  const uint64_t before = counters_of(w.writer, nullptr).at("xadd_acknowledged");
  server.start_again();
  ASSERT_EQ(redis().drain(w.writer, 10'000'000'000, &w.err), 1) << w.err.message;
  const auto k = counters_of(w.writer, nullptr);
  const uint64_t resent = k.at("xadd_resent");
  EXPECT_EQ(k.at("xadd_unsent"), 0u);
  EXPECT_LE(resent, 128u) << "the writer's ring";
  redisContext *admin = server.client();
  const long long kept = integer(admin, "XLEN %s", "psbench:streamtest:psb_streamtest_flight");
  redisFree(admin);
  // Every accepted write is in the stream; a resent one the server had kept is twice.
  EXPECT_GE(kept, (long long)accepted.load());
  EXPECT_LE(kept, (long long)(accepted.load() + resent));
  int errors = 0;
  auto got = take_all(r.reader, size_t(kept), PSB_NOTIFY_WAIT, &errors);
  EXPECT_EQ(got.size(), size_t(kept));
  std::vector<int64_t> distinct = got;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(distinct, range(0, accepted.load()));
  EXPECT_EQ(errors, 0);
  std::printf(
      "[ measured ] %u accepted, %llu acknowledged before the kill, %llu sent again, %lld in "
      "the file after the restart (%lld twice)\n",
      accepted.load(), (unsigned long long)before, (unsigned long long)resent, kept,
      kept - (long long)accepted.load());
}

// Reliable but volatile: the server keeps no file, so its restart loses the stream; the
// reader reads on from its last id and gets everything written after the restart.
TEST(RedisStream, AVolatileServersRestartLosesTheStreamButReadersGoOn) {
  psb_test::RedisServer server;
  StreamConfig c(server.address(), PSB_NOTIFY_WAIT, PSB_VOLATILE);
  Endpoints w(c), r(c);
  r.reader = redis().create_reader(r.ctx, "psb_streamtest_vol", nullptr, nullptr, &r.err);
  w.writer = redis().create_writer(w.ctx, "psb_streamtest_vol", &w.err);
  ASSERT_TRUE(r.reader && w.writer);
  ASSERT_EQ(write_range(w.writer, 0, 100), 0);
  ASSERT_EQ(redis().drain(w.writer, 5'000'000'000, &w.err), 1);
  int errors = 0;
  EXPECT_EQ(take_all(r.reader, 50, PSB_NOTIFY_WAIT, &errors), range(0, 50));
  server.kill9();
  server.start_again();
  write_range(w.writer, 100, 200);
  ASSERT_EQ(redis().drain(w.writer, 5'000'000'000, &w.err), 1);
  // 50..99 may still be in the reader's batch; then 100..199 from the new server.
  auto got = take_all(r.reader, 150, PSB_NOTIFY_WAIT, &errors);
  std::vector<int64_t> after;
  for (int64_t i : got)
    if (i >= 100) after.push_back(i);
  EXPECT_EQ(after, range(100, 200));
  EXPECT_EQ(errors, 0);
}

// Nothing left: destroyed endpoints close their connections (the server counts only the
// test's own client), and a stopped durable server's folder is gone.
TEST(RedisStream, NothingIsLeftBehind) {
  std::string dir;
  {
    psb_test::RedisServer server(true);
    dir = server.dir();
    {
      StreamConfig c(server.address(), PSB_NOTIFY_LISTENER, PSB_PERSISTENT);
      Endpoints e(c);
      auto cb = [](void *, const void *, size_t) {};
      e.reader = redis().create_reader(e.ctx, "psb_streamtest_left", cb, nullptr, &e.err);
      e.writer = redis().create_writer(e.ctx, "psb_streamtest_left", &e.err);
      ASSERT_TRUE(e.reader && e.writer);
      ASSERT_EQ(write_range(e.writer, 0, 10), 0);
    }
    redisContext *admin = server.client();
    const auto end = Clock::now() + std::chrono::seconds(5);
    long long clients = -1;
    while (Clock::now() < end) {
      auto *rep = static_cast<redisReply *>(redisCommand(admin, "CLIENT LIST"));
      clients = 0;
      for (const char *p = rep->str; (p = std::strchr(p, '\n')) != nullptr; ++p) ++clients;
      freeReplyObject(rep);
      if (clients == 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(clients, 1);
    redisFree(admin);
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}
