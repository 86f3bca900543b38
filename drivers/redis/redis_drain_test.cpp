// The redis driver's drain (ABI 4) against a real redis-server: write() does not wait
// for PUBLISH's reply, and drain returns 1 only once every reply came (the server has
// handed each message to the subscribers' connections).
#include <gtest/gtest.h>
#include <psbench/driver.h>
#include <signal.h>

#include <cstring>
#include <string>
#include <vector>

#include "driver_under_test.hpp"
#include "redis_test_server.hpp"
#include "test_config.hpp"
#include "test_process.hpp"

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

const psb_driver &redis() { return psb_test::driver_under_test(); }

// One writer on its own context, closed at the end.
struct Publisher : psb_test::BrokerConfig {
  explicit Publisher(const std::string &broker)
      : BrokerConfig(broker, "redisdrain", PSB_NOTIFY_WAIT, PSB_BEST_EFFORT, 1u << 20) {
    ctx = redis().open(&cfg, &err);
    if (ctx != nullptr) writer = redis().create_writer(ctx, "psb_redisdrain_t", &err);
  }
  ~Publisher() {
    if (writer) redis().destroy_writer(writer);
    if (ctx) redis().close(ctx);
  }
  psb_error err{};
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
};

}  // namespace

// A stopped server answers no PUBLISH: drain returns 0 within its timeout, then 1 once
// the server runs again (it answers all ten).
TEST(RedisDrain, DrainWaitsForEveryPublishReply) {
  psb_test::RedisServer server;
  Publisher pub(server.address());
  ASSERT_NE(pub.writer, nullptr) << pub.err.message;
  std::vector<uint8_t> m(64, 3);
  {
    psb_test::ResumeAtExit resume{server.pid()};
    ASSERT_TRUE(psb_test::stop_process(server.pid()));
    for (int i = 0; i < 10; ++i)
      ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0) << pub.err.message;
    EXPECT_EQ(redis().drain(pub.writer, 300 * kMs, &pub.err), 0);
    EXPECT_NE(std::strstr(pub.err.message, "did not answer 10 PUBLISH"), nullptr)
        << pub.err.message;
  }
  EXPECT_EQ(redis().drain(pub.writer, 10 * kS, &pub.err), 1) << pub.err.message;
}

// A server that is gone before it answered: drain fails (-1) and says so.
TEST(RedisDrain, DrainFailsWhenTheServerDied) {
  psb_test::RedisServer server;
  Publisher pub(server.address());
  ASSERT_NE(pub.writer, nullptr) << pub.err.message;
  std::vector<uint8_t> m(64, 3);
  ASSERT_TRUE(psb_test::stop_process(server.pid()));
  ASSERT_EQ(redis().write(pub.writer, m.data(), m.size(), &pub.err), 0) << pub.err.message;
  server.kill9();
  EXPECT_EQ(redis().drain(pub.writer, 10 * kS, &pub.err), -1);
  // "closed the publisher connection" (EOF) or "Connection reset by peer" (unread data).
  EXPECT_NE(std::strstr(pub.err.message, "publisher connection of psbench:redisdrain"), nullptr)
      << pub.err.message;
}
