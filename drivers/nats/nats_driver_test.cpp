// The nats driver through its ABI table, against a real nats-server this test starts
// (127.0.0.1, a free port, max_payload 8 MiB as psbench configures it) and stops.
#include <dirent.h>
#include <gtest/gtest.h>
#include <nats/nats.h>
#include <psbench/driver.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "nats_server.h"
#include "test_received.hpp"

namespace {

using psb_test::NatsServer;
using std::chrono::milliseconds;

const psb_driver &drv() { return psb_test::driver_under_test(); }

constexpr uint64_t kMiB = 1u << 20;

std::unique_ptr<NatsServer> g_server;

// One server for the whole test process (each ctest entry is its own process).
NatsServer &server() {
  if (!g_server) g_server = std::make_unique<NatsServer>(8 * kMiB);
  return *g_server;
}

class ServerEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { g_server.reset(); }
};
const auto *const kEnvironment = ::testing::AddGlobalTestEnvironment(new ServerEnvironment);

// One context with its config; options are kept alive here.
struct Ctx {
  Ctx(uint32_t notify, const std::string &broker, uint64_t max_payload = 4 * kMiB,
      const std::string &run_id = "natstest",
      std::vector<std::pair<std::string, std::string>> extra = {})
      : run(run_id), broker_value(broker), options_kv(std::move(extra)) {
    if (!broker.empty()) options_kv.insert(options_kv.begin(), {"broker", broker_value});
    for (auto &[k, v] : options_kv) options.push_back(psb_option{k.c_str(), v.c_str()});
    cfg.run_id = run.c_str();
    cfg.transport = "tcp";
    cfg.notify = notify;
    cfg.qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0};
    cfg.max_payload = max_payload;
    cfg.options = options.data();
    cfg.option_count = options.size();
  }
  bool open() {
    ctx = drv().open(&cfg, &err);
    return ctx != nullptr;
  }
  // Opens the context with a reader and a writer of topic in it.
  bool open_with_both(const char *topic) {
    if (!open()) return false;
    reader = drv().create_reader(ctx, topic, nullptr, nullptr, &err);
    writer = drv().create_writer(ctx, topic, &err);
    return reader && writer;
  }
  ~Ctx() {
    if (reader) drv().destroy_reader(reader);
    if (writer) drv().destroy_writer(writer);
    if (ctx) drv().close(ctx);
  }
  std::string run, broker_value;
  std::vector<std::pair<std::string, std::string>> options_kv;
  std::vector<psb_option> options;
  psb_config cfg{};
  psb_error err{};
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
};

std::vector<uint8_t> message(size_t size, uint32_t seed) {
  std::vector<uint8_t> m(size);
  for (size_t i = 0; i < size; ++i) m[i] = uint8_t(seed * 7 + i * 13 + (i >> 8));
  std::memcpy(m.data(), &seed, sizeof seed);
  return m;
}

using psb_test::take_one;  // within 5 s (wait: timeout_ns per take; poll: 0 in a spin)

bool contains(const char *text, const char *part) { return std::strstr(text, part) != nullptr; }

std::set<int> task_ids() {
  std::set<int> ids;
  DIR *d = opendir("/proc/self/task");
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.') ids.insert(std::atoi(e->d_name));
  closedir(d);
  return ids;
}

}  // namespace

TEST(NatsDriver, VersionIsTheLoadedLibrarys) {
  EXPECT_EQ(std::string(drv().version()), std::string("cnats ") + nats_GetVersion());
  EXPECT_NE(std::string(drv().version()).find("3."), std::string::npos);
}

TEST(NatsDriver, CapabilitiesSayCoreNats) {
  const psb_capabilities &c = drv().caps;
  EXPECT_EQ(std::string(drv().name), "nats");
  EXPECT_EQ(c.reliability, uint32_t(PSB_BEST_EFFORT));
  EXPECT_EQ(c.durability, uint32_t(PSB_VOLATILE));
  EXPECT_EQ(c.history, 0u);
  EXPECT_EQ(c.notify, uint32_t(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  ASSERT_TRUE(c.transports && c.transports[0]);
  EXPECT_EQ(std::string(c.transports[0]), "tcp");
  EXPECT_EQ(c.transports[1], nullptr);
  EXPECT_EQ(std::string(c.option_keys[0]), "broker");
  EXPECT_EQ(c.max_payload, 4 * kMiB);
  EXPECT_EQ(drv().loan, nullptr);
}

TEST(NatsDriver, CheckRefusesWhatCoreNatsCannotHonour) {
  struct Case {
    std::string name;
    std::function<void(Ctx &)> change;
    const char *message;  // nullptr: accepted
  };
  std::vector<Case> cases = {
      {"no broker", [](Ctx &c) { c.cfg.option_count = 0; },
       "option broker=HOST:PORT is missing; psbench sets it"},
      {"reliable", [](Ctx &c) { c.cfg.qos.reliability = PSB_RELIABLE; }, "JetStream"},
      {"transient_local", [](Ctx &c) { c.cfg.qos.durability = PSB_TRANSIENT_LOCAL; },
       "durability 'transient_local'"},
      {"keep_last",
       [](Ctx &c) {
         c.cfg.qos.history = PSB_KEEP_LAST;
         c.cfg.qos.history_depth = 5;
       },
       "history cannot be set"},
      {"keep_all", [](Ctx &c) { c.cfg.qos.history = PSB_KEEP_ALL; }, "pending limits"},
      {"transport", [](Ctx &c) { c.cfg.transport = "udp"; }, "transport 'udp' is not supported"},
      {"fine", [](Ctx &) {}, nullptr},
  };
  for (auto &k : cases) {
    Ctx c(PSB_NOTIFY_WAIT, "127.0.0.1:4222");
    k.change(c);
    psb_error err{};
    int r = psb_test::check(drv(), &c.cfg, &err);
    if (k.message == nullptr) {
      EXPECT_EQ(r, 0) << k.name << ": " << err.message;
      continue;
    }
    EXPECT_NE(r, 0) << k.name;
    EXPECT_TRUE(contains(err.message, k.message)) << k.name << ": " << err.message;
    EXPECT_EQ(std::strncmp(err.message, "nats: ", 6), 0) << err.message;
    // open() refuses the same, before connecting anywhere.
    psb_error open_err{};
    EXPECT_EQ(drv().open(&c.cfg, &open_err), nullptr) << k.name;
    EXPECT_STREQ(open_err.message, err.message);
  }
  Ctx reliable(PSB_NOTIFY_WAIT, "127.0.0.1:4222");
  reliable.cfg.qos.reliability = PSB_RELIABLE;
  psb_error err{};
  ASSERT_NE(psb_test::check(drv(), &reliable.cfg, &err), 0);
  EXPECT_TRUE(contains(err.message, "core NATS has no acknowledgement or redelivery"))
      << err.message;
  EXPECT_TRUE(contains(err.message, "psbench's nats driver uses core NATS")) << err.message;
}

TEST(NatsDriver, CheckParsesBrokerAndSendAsap) {
  for (const char *bad : {"localhost", "127.0.0.1:", ":4222", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:42a", "::1:4222", "[::1]4222", "a b:4222", "nats://x:1"}) {
    Ctx c(PSB_NOTIFY_WAIT, bad);
    psb_error err{};
    EXPECT_NE(psb_test::check(drv(), &c.cfg, &err), 0) << bad;
    EXPECT_TRUE(contains(err.message, "is not HOST:PORT")) << bad << ": " << err.message;
  }
  for (const char *good : {"127.0.0.1:4222", "localhost:1", "[::1]:65535", "nats.example:4222"}) {
    Ctx c(PSB_NOTIFY_WAIT, good);
    psb_error err{};
    EXPECT_EQ(psb_test::check(drv(), &c.cfg, &err), 0) << good << ": " << err.message;
  }
  for (const char *value : {"true", "false", "1", "0"}) {
    Ctx c(PSB_NOTIFY_WAIT, "127.0.0.1:4222", 64, "natstest", {{"send_asap", value}});
    psb_error err{};
    EXPECT_EQ(psb_test::check(drv(), &c.cfg, &err), 0) << err.message;
  }
  Ctx c(PSB_NOTIFY_WAIT, "127.0.0.1:4222", 64, "natstest", {{"send_asap", "yes"}});
  psb_error err{};
  EXPECT_NE(psb_test::check(drv(), &c.cfg, &err), 0);
  EXPECT_TRUE(contains(err.message, "send_asap='yes': use true or false")) << err.message;
}

TEST(NatsDriver, OpenSaysWhenNoServerListens) {
  // A port nothing listens on: start a server only to learn a free port, then stop it.
  std::string address;
  {
    NatsServer gone(kMiB);
    address = gone.address();
  }
  Ctx c(PSB_NOTIFY_WAIT, address);
  EXPECT_FALSE(c.open());
  EXPECT_TRUE(contains(c.err.message, ("cannot connect to nats-server at " + address).c_str()))
      << c.err.message;
}

TEST(NatsDriver, WaitAndPollDeliverExactBytesUpToFourMiB) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Ctx rx(notify, server().address()), tx(notify, server().address());
    ASSERT_TRUE(rx.open()) << rx.err.message;
    ASSERT_TRUE(tx.open()) << tx.err.message;
    rx.reader = drv().create_reader(rx.ctx, "psb_natstest_bytes", nullptr, nullptr, &rx.err);
    ASSERT_NE(rx.reader, nullptr) << rx.err.message;
    tx.writer = drv().create_writer(tx.ctx, "psb_natstest_bytes", &tx.err);
    ASSERT_NE(tx.writer, nullptr) << tx.err.message;
    // 32 KiB is cnats's read buffer: messages around and over it arrive split.
    for (size_t size : {size_t(32), size_t(64), size_t(1000), size_t(32767), size_t(32768),
                        size_t(32769), size_t(65536), kMiB, 4 * kMiB - 1, 4 * kMiB}) {
      auto sent = message(size, uint32_t(size));
      ASSERT_EQ(drv().write(tx.writer, sent.data(), sent.size(), &tx.err), 0) << tx.err.message;
      auto got = take_one(rx.reader, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0);
      ASSERT_EQ(got.size(), size) << "notify " << notify;
      EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
    }
  }
}

TEST(NatsDriver, ReaderAndWriterOfOneContextMeet) {
  Ctx c(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(c.open_with_both("psb_natstest_self")) << c.err.message;
  for (uint32_t i = 0; i < 100; ++i) {
    auto m = message(64 + i, i);
    ASSERT_EQ(drv().write(c.writer, m.data(), m.size(), &c.err), 0) << c.err.message;
  }
  for (uint32_t i = 0; i < 100; ++i)
    EXPECT_TRUE(take_one(c.reader, 100'000'000) == message(64 + i, i)) << i;
}

TEST(NatsDriver, TakeGivesNothingWhenNothingWasSent) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Ctx c(notify, server().address());
    ASSERT_TRUE(c.open()) << c.err.message;
    c.reader = drv().create_reader(c.ctx, "psb_natstest_quiet", nullptr, nullptr, &c.err);
    ASSERT_NE(c.reader, nullptr) << c.err.message;
    const void *data;
    size_t len;
    for (int i = 0; i < 1000; ++i)
      ASSERT_EQ(drv().take(c.reader, 0, &data, &len, &c.err), 0) << c.err.message;
    EXPECT_EQ(drv().take(c.reader, 1, &data, &len, &c.err), 0)
        << c.err.message;  // rounds up to 1 ms
    EXPECT_EQ(drv().take(c.reader, 20'000'000, &data, &len, &c.err), 0) << c.err.message;
  }
}

TEST(NatsDriver, ListenerGetsEveryMessageInOrderOnACnatsThreadAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<std::vector<uint8_t>> messages;
    std::set<std::thread::id> threads;
  } seen;
  Ctx rx(PSB_NOTIFY_LISTENER, server().address()), tx(PSB_NOTIFY_LISTENER, server().address());
  ASSERT_TRUE(rx.open() && tx.open()) << rx.err.message << tx.err.message;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::lock_guard lock(s->mu);
    s->messages.emplace_back(static_cast<const uint8_t *>(data),
                             static_cast<const uint8_t *>(data) + len);
    s->threads.insert(std::this_thread::get_id());
  };
  rx.reader = drv().create_reader(rx.ctx, "psb_natstest_listen", cb, &seen, &rx.err);
  ASSERT_NE(rx.reader, nullptr) << rx.err.message;
  tx.writer = drv().create_writer(tx.ctx, "psb_natstest_listen", &tx.err);
  ASSERT_NE(tx.writer, nullptr) << tx.err.message;
  auto size_of = [](uint32_t i) { return i == 100 ? size_t(kMiB) : size_t(32 + i * 7); };
  constexpr uint32_t kCount = 300;
  for (uint32_t i = 0; i < kCount; ++i) {
    auto m = message(size_of(i), i);
    ASSERT_EQ(drv().write(tx.writer, m.data(), m.size(), &tx.err), 0) << tx.err.message;
  }
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(seen.mu);
      if (seen.messages.size() >= kCount) break;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  {
    std::lock_guard lock(seen.mu);
    ASSERT_EQ(seen.messages.size(), kCount);
    for (uint32_t i = 0; i < kCount; ++i)
      EXPECT_TRUE(seen.messages[i] == message(size_of(i), i)) << i;
    ASSERT_EQ(seen.threads.size(), 1u);
    EXPECT_NE(*seen.threads.begin(), std::this_thread::get_id());
  }
  drv().destroy_reader(rx.reader);
  rx.reader = nullptr;
  // After destroy_reader returns, the callback never runs again.
  for (uint32_t i = 0; i < 20; ++i) {
    auto m = message(64, i);
    ASSERT_EQ(drv().write(tx.writer, m.data(), m.size(), &tx.err), 0) << tx.err.message;
  }
  std::this_thread::sleep_for(milliseconds(200));
  std::lock_guard lock(seen.mu);
  EXPECT_EQ(seen.messages.size(), kCount);
}

TEST(NatsDriver, SubscriptionIsInForceWhenCreateReaderReturns) {
  // The node cannot wait for a match (counts are -1): a message published from another
  // connection right after create_reader must arrive. Each round uses a new subject.
  Ctx tx(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(tx.open()) << tx.err.message;
  for (int round = 0; round < 40; ++round) {
    Ctx rx(PSB_NOTIFY_WAIT, server().address());
    ASSERT_TRUE(rx.open()) << rx.err.message;
    const std::string topic = "psb_natstest_race" + std::to_string(round);
    tx.writer = drv().create_writer(tx.ctx, topic.c_str(), &tx.err);
    ASSERT_NE(tx.writer, nullptr) << tx.err.message;
    rx.reader = drv().create_reader(rx.ctx, topic.c_str(), nullptr, nullptr, &rx.err);
    ASSERT_NE(rx.reader, nullptr) << rx.err.message;
    auto m = message(64, uint32_t(round));
    ASSERT_EQ(drv().write(tx.writer, m.data(), m.size(), &tx.err), 0) << tx.err.message;
    const void *data;
    size_t len;
    ASSERT_EQ(drv().take(rx.reader, 2'000'000'000, &data, &len, &rx.err), 1)
        << "round " << round << ": the first message was lost " << rx.err.message;
    drv().destroy_writer(tx.writer);
    tx.writer = nullptr;
  }
}

TEST(NatsDriver, MatchedCountsAreUnknown) {
  Ctx c(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(c.open_with_both("psb_natstest_match")) << c.err.message;
  EXPECT_EQ(drv().matched_readers(c.writer), -1);
  EXPECT_EQ(drv().matched_writers(c.reader), -1);
}

TEST(NatsDriver, RunsWithOtherIdsNeverMeet) {
  Ctx a(PSB_NOTIFY_WAIT, server().address(), 4 * kMiB, "runA"),
      b(PSB_NOTIFY_WAIT, server().address(), 4 * kMiB, "runB");
  ASSERT_TRUE(a.open() && b.open()) << a.err.message << b.err.message;
  a.reader = drv().create_reader(a.ctx, "psb_x_data", nullptr, nullptr, &a.err);
  b.reader = drv().create_reader(b.ctx, "psb_x_data", nullptr, nullptr, &b.err);
  a.writer = drv().create_writer(a.ctx, "psb_x_data", &a.err);
  ASSERT_TRUE(a.reader && b.reader && a.writer);
  auto m = message(128, 1);
  ASSERT_EQ(drv().write(a.writer, m.data(), m.size(), &a.err), 0) << a.err.message;
  EXPECT_TRUE(take_one(a.reader, 100'000'000) == m);
  const void *data;
  size_t len;
  EXPECT_EQ(drv().take(b.reader, 300'000'000, &data, &len, &b.err), 0);
}

TEST(NatsDriver, TopicsWithSubjectSyntaxAreRefused) {
  Ctx c(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(c.open()) << c.err.message;
  for (const char *topic : {"psb_a.b", "psb_*", "psb_>", "psb a", ""}) {
    psb_error err{};
    EXPECT_EQ(drv().create_reader(c.ctx, topic, nullptr, nullptr, &err), nullptr) << topic;
    EXPECT_TRUE(std::strlen(err.message) > 0 && std::strncmp(err.message, "nats: ", 6) == 0)
        << err.message;
    psb_error werr{};
    EXPECT_EQ(drv().create_writer(c.ctx, topic, &werr), nullptr) << topic;
  }
}

TEST(NatsDriver, MessagesOverTheServersMaxPayloadAreRefusedAtCreateWriter) {
  NatsServer small(kMiB);  // nats-server's default max_payload, 1 MiB
  {
    Ctx c(PSB_NOTIFY_WAIT, small.address(), 2 * kMiB);
    ASSERT_TRUE(c.open()) << c.err.message;
    EXPECT_EQ(drv().create_writer(c.ctx, "psb_natstest_big", &c.err), nullptr);
    EXPECT_TRUE(contains(c.err.message, "messages of 2097152 bytes do not fit")) << c.err.message;
    EXPECT_TRUE(contains(c.err.message, "accepts at most 1048576 bytes")) << c.err.message;
    EXPECT_TRUE(contains(c.err.message, small.address().c_str())) << c.err.message;
  }
  Ctx c(PSB_NOTIFY_WAIT, small.address(), kMiB);  // exactly the limit fits
  ASSERT_TRUE(c.open_with_both("psb_natstest_big")) << c.err.message;
  auto m = message(kMiB, 3);
  ASSERT_EQ(drv().write(c.writer, m.data(), m.size(), &c.err), 0) << c.err.message;
  EXPECT_TRUE(take_one(c.reader, 100'000'000) == m);
}

TEST(NatsDriver, SampleStaysValidUntilReleaseOrTheNextTake) {
  Ctx c(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(c.open_with_both("psb_natstest_hold")) << c.err.message;
  auto first = message(4096, 1), second = message(4096, 2);
  ASSERT_EQ(drv().write(c.writer, first.data(), first.size(), &c.err), 0);
  const void *data;
  size_t len;
  ASSERT_EQ(drv().take(c.reader, 1'000'000'000, &data, &len, &c.err), 1) << c.err.message;
  // Another message arrives while the first is held: the first is untouched.
  ASSERT_EQ(drv().write(c.writer, second.data(), second.size(), &c.err), 0);
  std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(len, first.size());
  EXPECT_EQ(std::memcmp(data, first.data(), len), 0);
  // take() without release() frees the held one and gives the next.
  ASSERT_EQ(drv().take(c.reader, 1'000'000'000, &data, &len, &c.err), 1) << c.err.message;
  ASSERT_EQ(len, second.size());
  EXPECT_EQ(std::memcmp(data, second.data(), len), 0);
  drv().release(c.reader);
  drv().release(c.reader);  // twice is harmless
}

TEST(NatsDriver, SendAsapOffStillDeliversEverything) {
  // send_asap=false: cnats's flusher thread writes, after gathering for up to 1 ms.
  Ctx c(PSB_NOTIFY_WAIT, server().address(), 4 * kMiB, "natstest", {{"send_asap", "false"}});
  ASSERT_TRUE(c.open_with_both("psb_natstest_batch")) << c.err.message;
  for (uint32_t i = 0; i < 200; ++i) {
    auto m = message(100, i);
    ASSERT_EQ(drv().write(c.writer, m.data(), m.size(), &c.err), 0) << c.err.message;
  }
  for (uint32_t i = 0; i < 200; ++i)
    ASSERT_TRUE(take_one(c.reader, 100'000'000) == message(100, i)) << i;
}

TEST(NatsDriver, ServerDeathMakesWriteAndTakeFailWithoutHanging) {
  NatsServer doomed(8 * kMiB);
  Ctx waiting(PSB_NOTIFY_WAIT, doomed.address()), polling(PSB_NOTIFY_POLL, doomed.address()),
      listening(PSB_NOTIFY_LISTENER, doomed.address());
  ASSERT_TRUE(waiting.open() && polling.open() && listening.open());
  std::atomic<int> heard{0};
  auto cb = [](void *user, const void *, size_t) {
    static_cast<std::atomic<int> *>(user)->fetch_add(1);
  };
  waiting.reader =
      drv().create_reader(waiting.ctx, "psb_natstest_die", nullptr, nullptr, &waiting.err);
  polling.reader =
      drv().create_reader(polling.ctx, "psb_natstest_die", nullptr, nullptr, &polling.err);
  listening.reader =
      drv().create_reader(listening.ctx, "psb_natstest_die", cb, &heard, &listening.err);
  waiting.writer = drv().create_writer(waiting.ctx, "psb_natstest_die", &waiting.err);
  ASSERT_TRUE(waiting.reader && polling.reader && listening.reader && waiting.writer);
  auto m = message(64, 9);
  ASSERT_EQ(drv().write(waiting.writer, m.data(), m.size(), &waiting.err), 0);
  EXPECT_TRUE(take_one(waiting.reader, 100'000'000) == m);
  EXPECT_TRUE(take_one(polling.reader, 0) == m);

  doomed.kill_now();

  // take: -1 (not 0 forever, not a hang) once cnats sees the socket close.
  const void *data;
  size_t len;
  int r = 0;
  for (int i = 0; i < 100 && r == 0; ++i)
    r = drv().take(waiting.reader, 100'000'000, &data, &len, &waiting.err);
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(contains(waiting.err.message, "is closed")) << waiting.err.message;
  r = 0;
  for (int i = 0; i < 1000 && r == 0; ++i) {
    r = drv().take(polling.reader, 0, &data, &len, &polling.err);
    if (r == 0) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(contains(polling.err.message, doomed.address().c_str()) ||
              contains(polling.err.message, "closed"))
      << polling.err.message;
  // write: -1 with a message.
  r = 0;
  for (int i = 0; i < 1000 && r == 0; ++i) {
    r = drv().write(waiting.writer, m.data(), m.size(), &waiting.err);
    if (r == 0) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(contains(waiting.err.message, "nats: publish")) << waiting.err.message;
  // Teardown (Ctx destructors) returns: the listener's delivery thread ends too.
}

TEST(NatsDriver, ReaderDestroyedWhileLargeMessagesArriveDoesNotCrash) {
  // cnats 3.4.1 looks a message's subscription up and then copies the payload without
  // holding a reference to it (fixed upstream in 3.6.1): a subscription freed in that
  // window crashed the reader thread. Large messages streaming in make the window wide.
  Ctx tx(PSB_NOTIFY_WAIT, server().address());
  ASSERT_TRUE(tx.open()) << tx.err.message;
  tx.writer = drv().create_writer(tx.ctx, "psb_natstest_teardown", &tx.err);
  ASSERT_NE(tx.writer, nullptr) << tx.err.message;
  std::atomic<bool> stop{false};
  std::thread flood([&] {
    auto m = message(4 * kMiB, 5);
    psb_error err{};
    while (!stop) drv().write(tx.writer, m.data(), m.size(), &err);
  });
  for (uint32_t notify :
       {PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER, PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER}) {
    for (int round = 0; round < 5; ++round) {
      Ctx rx(notify, server().address());
      ASSERT_TRUE(rx.open()) << rx.err.message;
      std::atomic<int> heard{0};
      auto cb = [](void *user, const void *, size_t) {
        static_cast<std::atomic<int> *>(user)->fetch_add(1);
      };
      rx.reader =
          drv().create_reader(rx.ctx, "psb_natstest_teardown",
                              notify == PSB_NOTIFY_LISTENER ? +cb : nullptr, &heard, &rx.err);
      ASSERT_NE(rx.reader, nullptr) << rx.err.message;
      if (notify == PSB_NOTIFY_WAIT) {
        EXPECT_EQ(take_one(rx.reader, 100'000'000).size(), 4 * kMiB);
      } else {
        for (int i = 0; i < 500 && heard == 0; ++i) std::this_thread::sleep_for(milliseconds(2));
        EXPECT_GT(heard, 0);
      }
      // rx's destructor: destroy_reader, then close, while messages keep arriving.
    }
  }
  stop = true;
  flood.join();
}

TEST(NatsDriver, NoThreadIsLeftAfterClose) {
  for (int round = 0; round < 2; ++round) {  // the second round reopens cnats
    const auto before = task_ids();
    {
      Ctx rx(PSB_NOTIFY_LISTENER, server().address()), tx(PSB_NOTIFY_WAIT, server().address());
      ASSERT_TRUE(rx.open() && tx.open()) << rx.err.message << tx.err.message;
      std::atomic<int> heard{0};
      auto cb = [](void *user, const void *, size_t) {
        static_cast<std::atomic<int> *>(user)->fetch_add(1);
      };
      rx.reader = drv().create_reader(rx.ctx, "psb_natstest_threads", cb, &heard, &rx.err);
      tx.reader = drv().create_reader(tx.ctx, "psb_natstest_threads", nullptr, nullptr, &tx.err);
      tx.writer = drv().create_writer(tx.ctx, "psb_natstest_threads", &tx.err);
      ASSERT_TRUE(rx.reader && tx.reader && tx.writer);
      EXPECT_GT(task_ids().size(), before.size());  // cnats's threads run now
      auto m = message(64, 1);
      ASSERT_EQ(drv().write(tx.writer, m.data(), m.size(), &tx.err), 0);
      EXPECT_TRUE(take_one(tx.reader, 100'000'000) == m);
      for (int i = 0; i < 500 && heard == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
      EXPECT_EQ(heard, 1);
    }
    // A thread that was told to stop may still be on its way out: give it time, but
    // every one must be gone.
    for (int i = 0; i < 200 && task_ids() != before; ++i)
      std::this_thread::sleep_for(milliseconds(10));
    EXPECT_EQ(task_ids(), before) << "round " << round;
  }
}
