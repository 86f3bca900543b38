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

struct TopicRun {
  TopicRun(const std::string &id, const std::vector<std::string> &listed)
      : run_id(id), names(listed) {
    for (const std::string &n : names) pointers.push_back(n.c_str());
    cfg.run_id = run_id.c_str();
    cfg.transport = "loopback";
    cfg.notify = PSB_NOTIFY_WAIT;
    cfg.qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0};
    cfg.max_payload = 64;
    cfg.readers = cfg.writers = 1;
    cfg.run_topics = pointers.empty() ? nullptr : pointers.data();
    cfg.run_topic_count = uint32_t(pointers.size());
    ctx = udp().open(&cfg, &err);
  }
  ~TopicRun() {
    for (psb_reader *r : readers) udp().destroy_reader(r);
    for (psb_writer *w : writers) udp().destroy_writer(w);
    if (ctx != nullptr) udp().close(ctx);
  }
  psb_reader *reader(const std::string &topic) {
    psb_reader *r = udp().create_reader(ctx, topic.c_str(), nullptr, nullptr, &err);
    if (r != nullptr) readers.push_back(r);
    return r;
  }
  psb_writer *writer(const std::string &topic) {
    psb_writer *w = udp().create_writer(ctx, topic.c_str(), &err);
    if (w != nullptr) writers.push_back(w);
    return w;
  }

  std::string run_id;
  std::vector<std::string> names;
  std::vector<const char *> pointers;
  psb_config cfg{};
  psb_error err{};
  psb_context *ctx = nullptr;
  std::vector<psb_reader *> readers;
  std::vector<psb_writer *> writers;
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
