// Durability persistent against a real mosquitto configured as psbench starts it for
// such runs (the manifest's durable_config): the broker is killed (SIGKILL) mid-stream and
// started again on the same port, configuration and folder; what was acknowledged before
// the kill and what was written while it was down or after it all arrive, take() and
// write() never fail, and the reader's session (its subscription and what was queued
// for it) comes back from the broker's database.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_broker.hpp"
#include "test_received.hpp"

namespace {

using psb_test::Broker;
using psb_test::DistinctSeqs;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

const psb_driver &mqtt() { return psb_test::driver_under_test(); }

const bool g_sigpipe_ignored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

// A persistent, reliable psb_config for one broker and the strings it points to.
struct Cfg {
  Cfg(const std::string &broker, uint32_t notify, uint32_t reliability = PSB_RELIABLE)
      : broker_(broker), option_{"broker", broker_.c_str()} {
    cfg.run_id = "mqttdurable";
    cfg.transport = "tcp";
    cfg.notify = notify;
    cfg.qos = psb_qos{reliability, PSB_PERSISTENT, 0, 0};
    cfg.max_payload = 1024;
    cfg.options = &option_;
    cfg.option_count = 1;
  }
  std::string broker_;
  psb_option option_;
  psb_config cfg{};
};

// One context; its endpoints are closed with it.
struct Ctx {
  explicit Ctx(const Cfg &c) : cfg(c) { ctx = mqtt().open(&cfg.cfg, &err); }
  ~Ctx() {
    if (ctx) mqtt().close(ctx);
  }
  Cfg cfg;
  psb_error err{};
  psb_context *ctx = nullptr;
};

// Takes (wait: take(100 ms); poll: take(0)) on a thread of its own until stopped, into
// a DistinctSeqs; counts the take() calls that failed.
struct Taker {
  Taker(psb_reader *r, uint32_t notify, uint32_t n) : seqs(n), reader(r) {
    thread = std::thread([this, notify] {
      while (!stop.load()) {
        const void *data;
        size_t len;
        psb_error e{};
        const int got =
            mqtt().take(reader, notify == PSB_NOTIFY_WAIT ? 100 * kMs : 0, &data, &len, &e);
        if (got < 0) {
          if (errors.fetch_add(1) == 0) first_error = e.message;
        } else if (got == 1) {
          DistinctSeqs::on_data(&seqs, data, len);
        }
      }
    });
  }
  ~Taker() { end(); }
  void end() {
    stop.store(true);
    if (thread.joinable()) thread.join();
  }
  DistinctSeqs seqs;
  psb_reader *reader;
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::string first_error;
  std::thread thread;
};

bool wait_until(const std::function<bool()> &done, int seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

// Writes seqs [from, to), one per millisecond; the number of writes that failed.
int write_range(psb_writer *w, uint32_t from, uint32_t to, std::string *first_error) {
  int failed = 0;
  std::vector<uint8_t> m(64, 0x5a);
  for (uint32_t i = from; i < to; ++i) {
    std::memcpy(m.data(), &i, sizeof i);
    psb_error e{};
    if (mqtt().write(w, m.data(), m.size(), &e) != 0 && failed++ == 0) *first_error = e.message;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return failed;
}

struct Counters {
  uint64_t reconnects = 0, sessions_lost = 0;
  static Counters of(psb_reader *r) {
    Counters c;
    mqtt().reader_counters(
        r,
        [](void *user, const char *name, uint64_t value) {
          auto *c = static_cast<Counters *>(user);
          if (std::strcmp(name, "reconnects") == 0) c->reconnects = value;
          if (std::strcmp(name, "sessions_lost") == 0) c->sessions_lost = value;
        },
        &c);
    return c;
  }
};

}  // namespace

TEST(MqttPersistent, IsDeclaredAndNeedsReliable) {
  EXPECT_TRUE(mqtt().caps.durability & PSB_PERSISTENT);
  psb_error err{};
  Cfg reliable("127.0.0.1:1883", PSB_NOTIFY_WAIT);
  EXPECT_EQ(psb_test::check(mqtt(), &reliable.cfg, &err), 0) << err.message;
  Cfg best_effort("127.0.0.1:1883", PSB_NOTIFY_WAIT, PSB_BEST_EFFORT);
  EXPECT_EQ(psb_test::check(mqtt(), &best_effort.cfg, &err), 1);
  EXPECT_EQ(
      std::string(err.message)
          .rfind("mqtt: durability persistent needs reliability reliable: the broker keeps", 0),
      0u)
      << err.message;
  EXPECT_EQ(mqtt().open(&best_effort.cfg, &err), nullptr);
}

// 200 messages delivered, the broker killed, 200 written while it is down (write()
// returns 0: libmosquitto queues them), the broker started again on the same port and
// folder, 200 more: the reader gets all 600 (duplicates allowed: resent after the
// reconnect), no take() or write() fails, drain() returns 1 once all are acknowledged.
TEST(MqttPersistent, ABrokerKilledMidStreamAndStartedAgainLosesNothing) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER}) {
    SCOPED_TRACE("notify " + std::to_string(notify));
    constexpr uint32_t kPhase = 200;
    auto broker = Broker::durable();
    Ctx sub(Cfg(broker->address(), notify));
    Ctx pub(Cfg(broker->address(), notify));
    ASSERT_TRUE(sub.ctx && pub.ctx) << sub.err.message << pub.err.message;
    DistinctSeqs heard(3 * kPhase);
    psb_reader *r =
        notify == PSB_NOTIFY_LISTENER
            ? mqtt().create_reader(sub.ctx, "psb_mqttdurable_kill", &DistinctSeqs::on_data, &heard,
                                   &sub.err)
            : mqtt().create_reader(sub.ctx, "psb_mqttdurable_kill", nullptr, nullptr, &sub.err);
    ASSERT_NE(r, nullptr) << sub.err.message;
    psb_writer *w = mqtt().create_writer(pub.ctx, "psb_mqttdurable_kill", &pub.err);
    ASSERT_NE(w, nullptr) << pub.err.message;
    std::unique_ptr<Taker> taker;
    if (notify != PSB_NOTIFY_LISTENER) taker = std::make_unique<Taker>(r, notify, 3 * kPhase);
    DistinctSeqs &got = taker ? taker->seqs : heard;

    std::string write_error;
    EXPECT_EQ(write_range(w, 0, kPhase, &write_error), 0) << write_error;
    // A writer-only connection in wait/poll mode sends the tail of its in-flight window
    // at its next write or drain (README, "QoS 1 in-flight window").
    ASSERT_EQ(mqtt().drain(w, 10 * kS, &pub.err), 1) << pub.err.message;
    ASSERT_TRUE(wait_until([&] { return got.count() == kPhase; }, 20)) << got.count();

    broker->kill_now();
    EXPECT_EQ(write_range(w, kPhase, 2 * kPhase, &write_error), 0) << write_error;
    // What the broker saved (the session, its subscription) is in the manifest's folder.
    EXPECT_TRUE(std::filesystem::exists(broker->folder() + "/mosquitto.db"));
    broker->start_again();
    EXPECT_EQ(write_range(w, 2 * kPhase, 3 * kPhase, &write_error), 0) << write_error;
    EXPECT_EQ(mqtt().drain(w, 20 * kS, &pub.err), 1) << pub.err.message;

    EXPECT_TRUE(wait_until([&] { return got.count() == 3 * kPhase; }, 20))
        << got.count() << " of " << 3 * kPhase << "\n"
        << broker->log();
    if (taker) {
      taker->end();
      EXPECT_EQ(taker->errors.load(), 0) << taker->first_error;
    }
    const Counters counters = Counters::of(r);
    EXPECT_GE(counters.reconnects, 1u);
    EXPECT_EQ(counters.sessions_lost, 0u);
    std::printf("notify %u: %u distinct of %u, %u taken in all, %llu reconnects\n", notify,
                got.count(), 3 * kPhase, got.total, (unsigned long long)counters.reconnects);
    mqtt().destroy_writer(w);
    mqtt().destroy_reader(r);
  }
}

// The reader does not take while 300 messages are published: the broker queues them for
// its session (beyond the 20 in flight) and saves them. Killed and started again, it
// gives the reader all 300 from its database.
TEST(MqttPersistent, WhatTheBrokerQueuedForAReaderSurvivesItsKill) {
  constexpr uint32_t kCount = 300;
  auto broker = Broker::durable();
  Ctx sub(Cfg(broker->address(), PSB_NOTIFY_WAIT));
  Ctx pub(Cfg(broker->address(), PSB_NOTIFY_WAIT));
  ASSERT_TRUE(sub.ctx && pub.ctx) << sub.err.message << pub.err.message;
  psb_reader *r =
      mqtt().create_reader(sub.ctx, "psb_mqttdurable_queued", nullptr, nullptr, &sub.err);
  psb_writer *w = mqtt().create_writer(pub.ctx, "psb_mqttdurable_queued", &pub.err);
  ASSERT_TRUE(r && w) << sub.err.message << pub.err.message;
  std::string write_error;
  EXPECT_EQ(write_range(w, 0, kCount, &write_error), 0) << write_error;
  ASSERT_EQ(mqtt().drain(w, 10 * kS, &pub.err), 1) << pub.err.message;
  // The broker saves at the end of the loop pass that queued a message.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  broker->kill_now();
  broker->start_again();
  Taker taker(r, PSB_NOTIFY_WAIT, kCount);
  EXPECT_TRUE(wait_until([&] { return taker.seqs.count() == kCount; }, 20))
      << taker.seqs.count() << " of " << kCount << "\n"
      << broker->log();
  taker.end();
  EXPECT_EQ(taker.errors.load(), 0) << taker.first_error;
  std::printf("%u distinct of %u, %u taken in all\n", taker.seqs.count(), kCount, taker.seqs.total);
  mqtt().destroy_writer(w);
  mqtt().destroy_reader(r);
}

// A writer alone (the node's pub, wait mode): write() returns 0 while the broker is
// down, drain() returns 0 then (nothing acknowledged), and 1 once it is back.
TEST(MqttPersistent, AWriterAloneQueuesWhileTheBrokerIsDown) {
  auto broker = Broker::durable();
  Ctx pub(Cfg(broker->address(), PSB_NOTIFY_WAIT));
  ASSERT_NE(pub.ctx, nullptr) << pub.err.message;
  psb_writer *w = mqtt().create_writer(pub.ctx, "psb_mqttdurable_alone", &pub.err);
  ASSERT_NE(w, nullptr) << pub.err.message;
  std::string write_error;
  EXPECT_EQ(write_range(w, 0, 50, &write_error), 0) << write_error;
  broker->kill_now();
  EXPECT_EQ(write_range(w, 50, 100, &write_error), 0) << write_error;
  EXPECT_EQ(mqtt().drain(w, 300 * kMs, &pub.err), 0) << pub.err.message;
  broker->start_again();
  EXPECT_EQ(mqtt().drain(w, 10 * kS, &pub.err), 1) << pub.err.message;
  mqtt().destroy_writer(w);
}
