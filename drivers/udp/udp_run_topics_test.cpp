// udp when the run lists its topics (psb_config.run_topics, ABI 8): a topic's port is its
// index among them from the run's start, so two topics whose names hash to one port (the
// second reader could not bind, without the list) get ports of their own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/sdk.hpp"
#include "test_topic_run.hpp"

namespace {

const psb_driver &udp() { return psb_test::driver_under_test(); }

// Two topics of run_id whose names hash to one port (port_base + FNV-1a % 12768).
std::pair<std::string, std::string> colliding_topics(const std::string &run_id) {
  std::vector<std::string> seen(12768);
  for (unsigned i = 0;; ++i) {
    std::string topic = "psb_" + run_id + "_t" + std::to_string(i);
    std::string &slot = seen[psb::sdk::fnv1a32(topic) % 12768];
    if (!slot.empty()) return {slot, topic};
    slot = topic;
  }
}

// Its context opened at once; the topics listed when there are any.
struct TopicRun : psb_test::TopicRun {
  TopicRun(const std::string &id, const std::vector<std::string> &listed)
      : psb_test::TopicRun(id, listed, true, "loopback") {
    ctx = udp().open(&cfg, &err);
  }
};

// The first byte of the message r takes within 2 s, or -1.
int take_byte(psb_reader *r) {
  const void *data = nullptr;
  size_t len = 0;
  psb_error err{};
  if (udp().take(r, 2'000'000'000, &data, &len, &err) != 1 || len == 0) return -1;
  return *static_cast<const unsigned char *>(data);
}

}  // namespace

TEST(UdpRunTopics, TwoTopicsWhoseNamesHashToOnePortGetTheirOwnWhenListed) {
  const std::string id = "udprt" + std::to_string(getpid());
  const auto [a, b] = colliding_topics(id);
  {  // Without the list: one port, so the second reader cannot bind.
    TopicRun run(id, {});
    ASSERT_NE(run.ctx, nullptr) << run.err.message;
    ASSERT_NE(run.reader(a), nullptr) << run.err.message;
    EXPECT_EQ(run.reader(b), nullptr);
    EXPECT_NE(std::string(run.err.message).find("cannot bind"), std::string::npos)
        << run.err.message;
  }
  // Listed: ports of their own, each message reaches its own topic's reader.
  TopicRun run(id, {"psb_" + id + "_x", a, b});
  ASSERT_NE(run.ctx, nullptr) << run.err.message;
  psb_reader *ra = run.reader(a), *rb = run.reader(b);
  ASSERT_TRUE(ra && rb) << run.err.message;
  psb_writer *wa = run.writer(a), *wb = run.writer(b);
  ASSERT_TRUE(wa && wb) << run.err.message;
  const unsigned char one = 1, two = 2;
  ASSERT_EQ(udp().write(wb, &two, 1, &run.err), 0) << run.err.message;
  ASSERT_EQ(udp().write(wa, &one, 1, &run.err), 0) << run.err.message;
  EXPECT_EQ(take_byte(ra), 1);
  EXPECT_EQ(take_byte(rb), 2);
  // A topic the run did not list has no port of its own.
  EXPECT_EQ(run.reader("psb_" + id + "_y"), nullptr);
  EXPECT_NE(std::string(run.err.message).find("is not among the run's 3 topics"), std::string::npos)
      << run.err.message;
}
