// The nats driver's drain and counters (ABI 4) against a real nats-server: drain
// returns 1 only once the server has every message published before it, and a
// subscription's counters say how many messages cnats dropped at its pending limit.
#include <gtest/gtest.h>
#include <psbench/driver.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "nats_server.h"
#include "test_config.hpp"
#include "test_process.hpp"
#include "test_received.hpp"

namespace {

using psb_test::NatsServer;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

const psb_driver &drv() { return psb_test::driver_under_test(); }

// One context on one server; endpoints are closed with it (Endpoints).
struct Conn : psb_test::BrokerConfig, psb_test::Endpoints {
  Conn(const std::string &broker, uint32_t notify, const char *send_asap = "true")
      : BrokerConfig(broker, "natsdrain", notify, PSB_BEST_EFFORT, 1u << 20,
                     {{"send_asap", send_asap}}) {
    ctx = drv().open(&cfg, &err);
  }
};

// What the driver's writer_counters() or reader_counters() hands over.
template <class Endpoint>
std::map<std::string, uint64_t> counters_of(Endpoint *endpoint) {
  return psb_test::counters_of(drv(), endpoint);
}

}  // namespace

// Run only by the test below, in a process of its own: publishes PSB_CHILD_COUNT
// messages back to back with send_asap=false (cnats's flusher thread writes its buffer
// up to 1 ms later), drains if PSB_CHILD_DRAIN=1, then ends at once without closing.
// Exit 10: drained; 11: drain timed out; 12: drain failed.
TEST(NatsDrainChild, DISABLED_PublishDrainAndEnd) {
  Conn pub(psb_test::env_or_empty("PSB_CHILD_BROKER"), PSB_NOTIFY_WAIT, "false");
  ASSERT_NE(pub.ctx, nullptr) << pub.err.message;
  pub.writer = drv().create_writer(pub.ctx, psb_test::env_or_empty("PSB_CHILD_TOPIC"), &pub.err);
  ASSERT_NE(pub.writer, nullptr) << pub.err.message;
  const uint32_t n = uint32_t(std::strtoul(psb_test::env_or_empty("PSB_CHILD_COUNT"), nullptr, 10));
  std::vector<uint8_t> m(64, 0x5a);
  for (uint32_t i = 0; i < n; ++i) {
    std::memcpy(m.data(), &i, sizeof i);
    ASSERT_EQ(drv().write(pub.writer, m.data(), m.size(), &pub.err), 0) << pub.err.message;
  }
  int drained = 1;
  if (std::strcmp(psb_test::env_or_empty("PSB_CHILD_DRAIN"), "1") == 0)
    drained = drv().drain(pub.writer, 30 * kS, &pub.err);
  _exit(drained == 1 ? 10 : drained == 0 ? 11 : 12);
}

// What cnats still buffers when a writer's process ends is lost; after drain returned 1
// the server had all of it, so the subscriber gets every message.
// (With drain skipped, PSB_CHILD_DRAIN=0, the subscriber got 13,046 to 16,967 of 20,000.)
TEST(NatsDrain, EveryMessageReachesTheServerBeforeDrainReturns) {
  NatsServer server;
  constexpr uint32_t kCount = 20'000;
  Conn sub(server.address(), PSB_NOTIFY_LISTENER);
  ASSERT_NE(sub.ctx, nullptr) << sub.err.message;
  psb_test::DistinctSeqs got(kCount);
  sub.reader = drv().create_reader(sub.ctx, "psb_natsdrain_t", psb_test::DistinctSeqs::on_data,
                                   &got, &sub.err);
  ASSERT_NE(sub.reader, nullptr) << sub.err.message;
  const int rc = psb_test::run_draining_writer("NatsDrainChild.DISABLED_PublishDrainAndEnd",
                                               server.address(), "psb_natsdrain_t", kCount, 60);
  EXPECT_EQ(rc, 10) << "the writer's drain did not return 1";
  EXPECT_EQ(got.count_within(kCount, 30), kCount);
}

// A stopped server sends no PONG: drain returns 0 within its timeout, then 1 once the
// server runs again. A server that is gone: -1, naming the closed connection.
TEST(NatsDrain, DrainSaysWhetherTheServerConfirmed) {
  NatsServer server;
  Conn pub(server.address(), PSB_NOTIFY_WAIT);
  ASSERT_NE(pub.ctx, nullptr) << pub.err.message;
  pub.writer = drv().create_writer(pub.ctx, "psb_natsdrain_s", &pub.err);
  ASSERT_NE(pub.writer, nullptr) << pub.err.message;
  std::vector<uint8_t> m(64, 1);
  {
    psb_test::ResumeAtExit resume{server.pid()};
    ASSERT_TRUE(psb_test::stop_process(server.pid()));
    for (int i = 0; i < 10; ++i)
      EXPECT_EQ(drv().write(pub.writer, m.data(), m.size(), &pub.err), 0);
    EXPECT_EQ(drv().drain(pub.writer, 300 * kMs, &pub.err), 0);
    EXPECT_NE(std::strstr(pub.err.message, "no PONG"), nullptr) << pub.err.message;
  }
  EXPECT_EQ(drv().drain(pub.writer, 10 * kS, &pub.err), 1) << pub.err.message;
  server.kill_now();
  EXPECT_EQ(drv().drain(pub.writer, 10 * kS, &pub.err), -1);
  EXPECT_NE(std::strstr(pub.err.message, "closed"), nullptr) << pub.err.message;
}

// A reader that does not take while 70,000 messages arrive: cnats keeps its pending
// limit (65,536 messages) and drops the rest. counters() reports exactly those as
// "dropped", and what take() gets is the rest.
TEST(NatsCounters, DroppedIsWhatCnatsDroppedAtItsPendingLimit) {
  NatsServer server;
  constexpr uint32_t kCount = 70'000, kLimit = 65'536;
  Conn sub(server.address(), PSB_NOTIFY_WAIT), pub(server.address(), PSB_NOTIFY_WAIT);
  ASSERT_TRUE(sub.ctx && pub.ctx) << sub.err.message << pub.err.message;
  sub.reader = drv().create_reader(sub.ctx, "psb_natsdrain_c", nullptr, nullptr, &sub.err);
  pub.writer = drv().create_writer(pub.ctx, "psb_natsdrain_c", &pub.err);
  ASSERT_TRUE(sub.reader && pub.writer) << sub.err.message << pub.err.message;
  EXPECT_TRUE(counters_of(pub.writer).empty());
  EXPECT_EQ(counters_of(sub.reader)["dropped"], 0u);
  std::vector<uint8_t> m(32, 7);
  for (uint32_t i = 0; i < kCount; ++i) {
    std::memcpy(m.data(), &i, sizeof i);
    ASSERT_EQ(drv().write(pub.writer, m.data(), m.size(), &pub.err), 0) << pub.err.message;
  }
  ASSERT_EQ(drv().drain(pub.writer, 30 * kS, &pub.err), 1) << pub.err.message;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (counters_of(sub.reader)["dropped"] < kCount - kLimit &&
         std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  uint32_t taken = 0;
  const void *data;
  size_t len;
  while (taken <= kCount && drv().take(sub.reader, 200 * kMs, &data, &len, &sub.err) == 1) ++taken;
  EXPECT_EQ(taken, kLimit);
  EXPECT_EQ(counters_of(sub.reader)["dropped"], kCount - kLimit);
}
