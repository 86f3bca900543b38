// The mqtt driver through its ABI table, against a real mosquitto that each test starts
// (test_broker.hpp): exchanges in every notify mode at both QoS, sizes up to 4 MiB,
// retained messages, every refusal, the subscription being active when create_reader
// returns, TCP_NODELAY on the client socket, clean disconnects, and a broker that dies.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_broker.hpp"
#include "test_signal.hpp"

namespace {

using psb_test::Broker;
using Bytes = std::vector<uint8_t>;
constexpr uint64_t kMiB = 1u << 20;
constexpr int64_t kMs = 1'000'000;

const psb_driver &mqtt() { return psb_test::driver_under_test(); }

// The node ignores SIGPIPE (libmosquitto writes with write(), not send(MSG_NOSIGNAL));
// so does this test.
const bool g_sigpipe_ignored = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();

// A psb_config and the strings it points to.
struct Config {
  Config(const std::string &broker, uint32_t notify, uint32_t reliability = PSB_BEST_EFFORT,
         uint32_t durability = PSB_VOLATILE, uint64_t max_payload = 4 * kMiB) {
    if (!broker.empty()) set("broker", broker);
    cfg.run_id = "mqtttest";
    cfg.transport = "tcp";
    cfg.notify = notify;
    cfg.qos = psb_qos{reliability, durability, 0, 0};
    cfg.max_payload = max_payload;
  }
  Config &set(const std::string &key, const std::string &value) {
    for (auto &kv : kv_)
      if (kv.first == key) {
        kv.second = value;
        return refresh();
      }
    kv_.emplace_back(key, value);
    return refresh();
  }
  Config &history(uint32_t h, uint32_t depth) {
    cfg.qos.history = h;
    cfg.qos.history_depth = depth;
    return *this;
  }
  Config &refresh() {
    options_.clear();
    for (auto &kv : kv_) options_.push_back({kv.first.c_str(), kv.second.c_str()});
    cfg.options = options_.data();
    cfg.option_count = options_.size();
    return *this;
  }
  psb_config cfg{};

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
  std::vector<psb_option> options_;
};

// One context, with the endpoints a test makes on it; everything closed at the end.
struct Ctx {
  explicit Ctx(const Config &c) : config(c) { ctx = mqtt().open(&config.cfg, &err); }
  ~Ctx() {
    for (psb_reader *r : readers) mqtt().destroy_reader(r);
    for (psb_writer *w : writers) mqtt().destroy_writer(w);
    if (ctx) mqtt().close(ctx);
  }
  psb_writer *writer(const char *topic) {
    psb_writer *w = mqtt().create_writer(ctx, topic, &err);
    if (w) writers.push_back(w);
    return w;
  }
  psb_reader *reader(const char *topic, psb_on_data cb = nullptr, void *user = nullptr) {
    psb_reader *r = mqtt().create_reader(ctx, topic, cb, user, &err);
    if (r) readers.push_back(r);
    return r;
  }
  void drop_reader(psb_reader *r) {
    mqtt().destroy_reader(r);
    readers.erase(std::find(readers.begin(), readers.end(), r));
  }
  Config config;
  psb_error err{};
  psb_context *ctx = nullptr;
  std::vector<psb_reader *> readers;
  std::vector<psb_writer *> writers;
};

Bytes message(size_t size, uint32_t seed) {
  Bytes m(size);
  for (size_t i = 0; i < size; ++i) m[i] = uint8_t(seed * 31u + i * 7u + 1u);
  std::memcpy(m.data(), &seed, sizeof seed);
  return m;
}

uint32_t seed_of(const void *data) {
  uint32_t s;
  std::memcpy(&s, data, sizeof s);
  return s;
}

// Takes one message within `seconds`, by take(timeout) in wait mode or take(0) in a
// spin in poll mode; empty on none. An error fails the test.
Bytes take_one(psb_reader *reader, uint32_t notify, int seconds = 10) {
  const void *data;
  size_t len;
  psb_error err{};
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    int r = mqtt().take(reader, notify == PSB_NOTIFY_WAIT ? 100 * kMs : 0, &data, &len, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r < 0) return {};
    if (r == 1) {
      Bytes got(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + len);
      mqtt().release(reader);
      return got;
    }
  }
  return {};
}

// What a listener callback saw.
struct Seen {
  std::mutex mu;
  std::vector<Bytes> messages;
  static void on_data(void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::lock_guard<std::mutex> lock(s->mu);
    s->messages.emplace_back(static_cast<const uint8_t *>(data),
                             static_cast<const uint8_t *>(data) + len);
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return messages.size();
  }
  bool wait_for(size_t n, int seconds = 20) {
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (count() < n && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return count() >= n;
  }
};

std::string check_message(const Config &c) {
  psb_error err{};
  return psb_test::check(mqtt(), &c.cfg, &err) == 0 ? std::string("accepted")
                                                    : std::string(err.message);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// --- the table ---------------------------------------------------------------------

TEST(MqttDriver, DeclaresWhatMqttOffers) {
  const psb_driver &d = mqtt();
  EXPECT_EQ(d.abi_version, PSB_ABI_VERSION);
  EXPECT_STREQ(d.name, "mqtt");
  // mosquitto_lib_version() of the library loaded (Debian 12: 2.0.11).
  EXPECT_TRUE(std::string(d.version()).rfind("libmosquitto 2.", 0) == 0) << d.version();
  EXPECT_EQ(d.caps.reliability, uint32_t(PSB_BEST_EFFORT | PSB_RELIABLE));
  EXPECT_EQ(d.caps.durability, uint32_t(PSB_VOLATILE | PSB_TRANSIENT_LOCAL | PSB_PERSISTENT));
  EXPECT_EQ(d.caps.history, 0u);  // no reader history: check() says why
  EXPECT_EQ(d.caps.notify, uint32_t(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  ASSERT_NE(d.caps.transports, nullptr);
  EXPECT_STREQ(d.caps.transports[0], "tcp");
  EXPECT_EQ(d.caps.transports[1], nullptr);
  std::vector<std::string> keys;
  for (auto k = d.caps.option_keys; *k; ++k) keys.emplace_back(*k);
  EXPECT_EQ(keys, (std::vector<std::string>{"broker", "keepalive", "tcp_nodelay", "max_inflight",
                                            "security", "security_dir"}));
  EXPECT_EQ(d.caps.max_payload, 4194304u);
  EXPECT_EQ(d.loan, nullptr);
  EXPECT_EQ(d.write_loan, nullptr);
}

// --- refusals ----------------------------------------------------------------------

TEST(MqttDriver, RefusesWhatItCannotHonourAndSaysWhy) {
  const std::string b = "127.0.0.1:1883";
  EXPECT_EQ(check_message(Config("", PSB_NOTIFY_WAIT)),
            "mqtt: option broker=HOST:PORT is missing; psbench sets it when it starts "
            "mosquitto, or give the address of your own broker");
  for (const char *bad : {"127.0.0.1", "localhost:", ":1883", "127.0.0.1:0", "h:70000", "::1:1883",
                          "[::1:1883", "h:12x"}) {
    Config c(bad, PSB_NOTIFY_WAIT);
    EXPECT_TRUE(contains(check_message(c), "is not HOST:PORT")) << bad << ": " << check_message(c);
  }
  EXPECT_EQ(check_message(Config("[::1]:1883", PSB_NOTIFY_WAIT)), "accepted");
  EXPECT_EQ(check_message(Config("broker.example:8883", PSB_NOTIFY_POLL)), "accepted");
  for (const char *bad : {"3", "-1", "65536", "ten", ""}) {
    Config c(b, PSB_NOTIFY_WAIT);
    c.set("keepalive", bad);
    EXPECT_TRUE(contains(check_message(c), "option keepalive='")) << bad;
  }
  for (const char *good : {"0", "5", "65535"}) {
    Config c(b, PSB_NOTIFY_WAIT);
    c.set("keepalive", good);
    EXPECT_EQ(check_message(c), "accepted") << good;
  }
  for (const char *bad : {"-1", "65536", "x"}) {
    Config c(b, PSB_NOTIFY_WAIT);
    c.set("max_inflight", bad);
    EXPECT_TRUE(contains(check_message(c), "option max_inflight='")) << bad;
  }
  {
    Config c(b, PSB_NOTIFY_WAIT);
    c.set("tcp_nodelay", "maybe");
    EXPECT_EQ(check_message(c), "mqtt: option tcp_nodelay='maybe': use true or false");
  }
  // Retained messages: one per topic.
  {
    Config c(b, PSB_NOTIFY_WAIT, PSB_RELIABLE, PSB_TRANSIENT_LOCAL);
    EXPECT_EQ(check_message(c), "accepted");
    // A live reader that falls behind gets everything: no depth can be honoured.
    EXPECT_TRUE(contains(check_message(c.history(PSB_KEEP_LAST, 1)),
                         "history keep_last:1 cannot be honoured"))
        << check_message(c);
    EXPECT_TRUE(
        contains(check_message(c.history(PSB_KEEP_ALL, 0)), "history keep_all cannot be honoured"));
  }
  {
    Config c(b, PSB_NOTIFY_WAIT);
    EXPECT_TRUE(contains(check_message(c.history(PSB_KEEP_LAST, 1)),
                         "history keep_last:1 cannot be honoured"))
        << check_message(c);
  }
  {
    Config c(b, PSB_NOTIFY_WAIT);
    c.cfg.transport = "udp";
    EXPECT_TRUE(contains(check_message(c), "transport 'udp' is not offered"));
  }
  {
    Config c(b, PSB_NOTIFY_WAIT);
    c.cfg.use_loan = 1;
    EXPECT_TRUE(contains(check_message(c), "loans are not offered"));
  }
  {
    Config c(b, PSB_NOTIFY_WAIT, PSB_BEST_EFFORT, PSB_VOLATILE, 4 * kMiB + 1);
    EXPECT_TRUE(contains(check_message(c), "over the driver's limit of 4194304 bytes"));
  }
  // open() refuses the same, before connecting anywhere.
  psb_error err{};
  Config none("", PSB_NOTIFY_WAIT);
  EXPECT_EQ(mqtt().open(&none.cfg, &err), nullptr);
  EXPECT_TRUE(contains(err.message, "option broker=HOST:PORT is missing"));
}

TEST(MqttDriver, NoBrokerListeningIsAClearErrorNamingTheAddress) {
  const int port = psb_test::free_port();
  Ctx c(Config("127.0.0.1:" + std::to_string(port), PSB_NOTIFY_WAIT));
  EXPECT_EQ(c.ctx, nullptr);
  EXPECT_TRUE(contains(c.err.message, "mqtt: cannot connect to the broker at 127.0.0.1:" +
                                          std::to_string(port) + ": Connection refused"))
      << c.err.message;
}

TEST(MqttDriver, EndpointMisuseIsRefused) {
  Broker broker;
  Ctx wait(Config(broker.address(), PSB_NOTIFY_WAIT));
  ASSERT_NE(wait.ctx, nullptr) << wait.err.message;
  ASSERT_NE(wait.reader("psb_mqtttest_dup"), nullptr) << wait.err.message;
  EXPECT_EQ(wait.reader("psb_mqtttest_dup"), nullptr);
  EXPECT_TRUE(
      contains(wait.err.message, "already has a reader on psbench/mqtttest/psb_mqtttest_dup"));
  EXPECT_EQ(wait.reader("psb_mqtttest_x", &Seen::on_data, nullptr), nullptr);
  EXPECT_TRUE(contains(wait.err.message, "on_data must be given exactly in listener mode"));
  EXPECT_EQ(wait.reader("psb/+"), nullptr);
  EXPECT_TRUE(contains(wait.err.message, "not a valid MQTT topic without wildcards"))
      << wait.err.message;
  EXPECT_EQ(wait.writer("psb/#"), nullptr);
  EXPECT_TRUE(contains(wait.err.message, "not a valid MQTT topic"));

  Config small(broker.address(), PSB_NOTIFY_WAIT, PSB_BEST_EFFORT, PSB_VOLATILE, 100);
  Ctx c(small);
  psb_writer *w = c.writer("psb_mqtttest_size");
  ASSERT_NE(w, nullptr);
  Bytes big(101);
  psb_error err{};
  EXPECT_EQ(mqtt().write(w, big.data(), big.size(), &err), -1);
  EXPECT_STREQ(err.message, "mqtt: a 101-byte message is over this run's max_payload of 100 bytes");
  // MQTT cannot tell who else is on a topic.
  EXPECT_EQ(mqtt().matched_readers(w), -1);
  EXPECT_EQ(mqtt().matched_writers(wait.readers[0]), -1);

  Seen seen;
  Ctx listener(Config(broker.address(), PSB_NOTIFY_LISTENER));
  psb_reader *r = listener.reader("psb_mqtttest_l", &Seen::on_data, &seen);
  ASSERT_NE(r, nullptr) << listener.err.message;
  const void *data;
  size_t len;
  EXPECT_EQ(mqtt().take(r, 0, &data, &len, &err), -1);
  EXPECT_STREQ(err.message, "mqtt: take() is not used in listener mode");
}

// --- exchanges ---------------------------------------------------------------------

// Writer and reader on separate connections (as between two processes) and on the
// same one, in wait and poll mode, at both QoS: every size arrives byte for byte.
TEST(MqttDriver, WaitAndPollDeliverExactBytesUpToFourMiB) {
  Broker broker;
  const size_t sizes[] = {32, 100, 65536, 65537, kMiB, 4 * kMiB};
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    for (uint32_t rel : {PSB_BEST_EFFORT, PSB_RELIABLE}) {
      for (bool same : {false, true}) {
        SCOPED_TRACE(std::string(notify == PSB_NOTIFY_WAIT ? "wait" : "poll") +
                     (rel == PSB_RELIABLE ? " reliable" : " best_effort") +
                     (same ? " one context" : " two contexts"));
        Config cfg(broker.address(), notify, rel);
        Ctx a(cfg), b(cfg);
        ASSERT_TRUE(a.ctx && b.ctx) << a.err.message << b.err.message;
        Ctx &rctx = same ? a : b;
        psb_reader *r = rctx.reader("psb_mqtttest_bytes");
        psb_writer *w = a.writer("psb_mqtttest_bytes");
        ASSERT_TRUE(r && w) << a.err.message << rctx.err.message;
        uint32_t seed = 0;
        for (size_t size : sizes) {
          Bytes sent = message(size, ++seed);
          ASSERT_EQ(mqtt().write(w, sent.data(), sent.size(), &a.err), 0) << a.err.message;
          Bytes got = take_one(r, notify);
          ASSERT_EQ(got.size(), size);
          EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
        }
      }
    }
  }
}

TEST(MqttDriver, TakeReturnsNothingWhenNothingWasSent) {
  Broker broker;
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    Ctx c(Config(broker.address(), notify));
    psb_reader *r = c.reader("psb_mqtttest_none");
    ASSERT_NE(r, nullptr) << c.err.message;
    const void *data;
    size_t len;
    EXPECT_EQ(mqtt().take(r, 20 * kMs, &data, &len, &c.err), 0);
    EXPECT_EQ(mqtt().take(r, 0, &data, &len, &c.err), 0);
    EXPECT_EQ(mqtt().take(r, 1, &data, &len, &c.err), 0);  // under a millisecond
  }
}

// The first message written after create_reader returns is never lost: the SUBACK has
// come back by then. Repeated on fresh topics, right after the subscription, at QoS 0.
TEST(MqttDriver, SubscriptionIsActiveWhenCreateReaderReturns) {
  Broker broker;
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER}) {
    Config cfg(broker.address(), notify);
    Ctx pub(cfg), sub(cfg);
    ASSERT_TRUE(pub.ctx && sub.ctx);
    for (int i = 0; i < 30; ++i) {
      const std::string topic = "psb_mqtttest_first" + std::to_string(i);
      psb_writer *w = pub.writer(topic.c_str());
      ASSERT_NE(w, nullptr) << pub.err.message;
      Seen seen;
      psb_reader *r = notify == PSB_NOTIFY_LISTENER
                          ? sub.reader(topic.c_str(), &Seen::on_data, &seen)
                          : sub.reader(topic.c_str());
      ASSERT_NE(r, nullptr) << sub.err.message;
      Bytes m = message(64, uint32_t(i));
      ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0) << pub.err.message;
      if (notify == PSB_NOTIFY_LISTENER) {
        ASSERT_TRUE(seen.wait_for(1)) << "message " << i << " lost";
        sub.drop_reader(r);
        EXPECT_TRUE(seen.messages[0] == m);
      } else {
        EXPECT_TRUE(take_one(r, notify) == m) << "message " << i << " lost";
        sub.drop_reader(r);
      }
    }
  }
}

// Listener: every message, in order, on libmosquitto's thread; none after destroy_reader.
TEST(MqttDriver, ListenerGetsEveryMessageInOrderAndNothingAfterDestroy) {
  Broker broker;
  for (uint32_t rel : {PSB_BEST_EFFORT, PSB_RELIABLE}) {
    Config cfg(broker.address(), PSB_NOTIFY_LISTENER, rel);
    Ctx pub(cfg), sub(cfg);
    ASSERT_TRUE(pub.ctx && sub.ctx) << pub.err.message;
    Seen seen;
    psb_reader *r = sub.reader("psb_mqtttest_listen", &Seen::on_data, &seen);
    psb_writer *w = pub.writer("psb_mqtttest_listen");
    ASSERT_TRUE(r && w) << sub.err.message << pub.err.message;
    constexpr uint32_t kCount = 300;
    for (uint32_t i = 0; i < kCount; ++i) {
      Bytes m = message(100 + i, i);
      ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0) << pub.err.message;
      if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    Bytes large = message(4 * kMiB, kCount);
    ASSERT_EQ(mqtt().write(w, large.data(), large.size(), &pub.err), 0);
    ASSERT_TRUE(seen.wait_for(kCount + 1)) << seen.count() << " of " << kCount + 1;
    sub.drop_reader(r);
    const size_t at_destroy = seen.count();
    for (uint32_t i = 0; i < 20; ++i) {
      Bytes m = message(64, i);
      ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(seen.count(), at_destroy);
    ASSERT_EQ(at_destroy, kCount + 1u);
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(seen.messages[i].size(), 100u + i);
      EXPECT_EQ(seed_of(seen.messages[i].data()), i);
    }
    EXPECT_TRUE(seen.messages[kCount] == large);
  }
}

// QoS 1, a writer-only connection publishing back to back (so write() itself has to
// read the PUBACKs that free libmosquitto's in-flight window), a reader taking on
// another thread: all arrive, in order, none twice.
TEST(MqttDriver, ReliableBackToBackLosesNothing) {
  // As psbench configures it: mosquitto's default (1000 messages beyond the in-flight
  // ones) would drop QoS 1 messages for a subscriber that falls that far behind.
  Broker broker("max_queued_messages 0\n");
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER})
    for (bool unlimited : {false, true}) {
      SCOPED_TRACE(std::to_string(notify) + (unlimited ? " max_inflight=0" : ""));
      Config cfg(broker.address(), notify, PSB_RELIABLE);
      if (unlimited) cfg.set("max_inflight", "0");
      Ctx pub(cfg), sub(cfg);
      ASSERT_TRUE(pub.ctx && sub.ctx);
      constexpr uint32_t kCount = 3000;
      std::vector<uint32_t> got;
      std::mutex mu;
      auto record = [](void *user, const void *data, size_t) {
        auto *p = static_cast<std::pair<std::mutex *, std::vector<uint32_t> *> *>(user);
        std::lock_guard<std::mutex> lock(*p->first);
        p->second->push_back(seed_of(data));
      };
      std::pair<std::mutex *, std::vector<uint32_t> *> sink{&mu, &got};
      psb_reader *r = notify == PSB_NOTIFY_LISTENER ? sub.reader("psb_mqtttest_b2b", record, &sink)
                                                    : sub.reader("psb_mqtttest_b2b");
      psb_writer *w = pub.writer("psb_mqtttest_b2b");
      ASSERT_TRUE(r && w);
      std::thread taker;
      if (notify != PSB_NOTIFY_LISTENER)
        taker = std::thread([&] {
          for (uint32_t i = 0; i < kCount; ++i) {
            Bytes m = take_one(r, notify, 30);
            if (m.empty()) return;
            record(&sink, m.data(), m.size());
          }
        });
      Bytes m = message(1024, 0);
      for (uint32_t i = 0; i < kCount; ++i) {
        std::memcpy(m.data(), &i, sizeof i);
        ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0) << pub.err.message;
      }
      // Beyond libmosquitto's in-flight window (max_inflight, 20) QoS 1 messages wait in
      // the client; in wait/poll mode a writer-only connection sends them as PUBACKs come
      // in, on its next write() or, after the last one, in destroy_writer. With no window
      // to speak of (max_inflight=0), each went out in its write().
      if (!unlimited) {
        mqtt().destroy_writer(w);
        pub.writers.clear();
      }
      if (taker.joinable()) taker.join();
      auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (std::chrono::steady_clock::now() < end) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (got.size() >= kCount) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::lock_guard<std::mutex> lock(mu);
      ASSERT_EQ(got.size(), kCount) << broker.log();
      for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], i);
    }
}

// The node's open-loop ping: one thread writes on a connection while another takes on
// the same connection (wait and poll): nothing is lost, nothing hangs.
TEST(MqttDriver, OneThreadWritesWhileAnotherTakesOnTheSameConnection) {
  Broker broker;
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL}) {
    for (uint32_t rel : {PSB_BEST_EFFORT, PSB_RELIABLE}) {
      Config cfg(broker.address(), notify, rel);
      Ctx ping(cfg), pong(cfg);
      ASSERT_TRUE(ping.ctx && pong.ctx);
      psb_writer *ping_w = ping.writer("psb_mqtttest_ping");
      psb_reader *ping_r = ping.reader("psb_mqtttest_pong");
      psb_writer *pong_w = pong.writer("psb_mqtttest_pong");
      psb_reader *pong_r = pong.reader("psb_mqtttest_ping");
      ASSERT_TRUE(ping_w && ping_r && pong_w && pong_r);
      constexpr uint32_t kCount = 1000;
      std::atomic<bool> stop{false};
      std::thread echo([&] {
        psb_error err{};
        while (!stop) {
          const void *data;
          size_t len;
          int r = mqtt().take(pong_r, notify == PSB_NOTIFY_WAIT ? 20 * kMs : 0, &data, &len, &err);
          if (r == 1) mqtt().write(pong_w, data, len, &err);
        }
      });
      std::vector<uint32_t> back;
      std::thread rx([&] {
        while (back.size() < kCount) {
          Bytes m = take_one(ping_r, notify, 30);
          if (m.empty()) return;
          back.push_back(seed_of(m.data()));
        }
      });
      for (uint32_t i = 0; i < kCount; ++i) {
        Bytes m = message(i % 2 ? 256 : 70000, i);
        ASSERT_EQ(mqtt().write(ping_w, m.data(), m.size(), &ping.err), 0) << ping.err.message;
        if (i % 100 == 99) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      rx.join();
      stop = true;
      echo.join();
      ASSERT_EQ(back.size(), kCount);
      for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(back[i], i);
    }
  }
}

// --- durability --------------------------------------------------------------------

TEST(MqttDriver, TransientLocalGivesALateReaderTheLastMessageAndIsClearedAtTheEnd) {
  Broker broker;
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_LISTENER}) {
    Config cfg(broker.address(), notify, PSB_RELIABLE, PSB_TRANSIENT_LOCAL);
    auto late_reader_sees = [&](Bytes *first) {
      Ctx late(cfg);
      Seen seen;
      psb_reader *r = notify == PSB_NOTIFY_LISTENER
                          ? late.reader("psb_mqtttest_tl", &Seen::on_data, &seen)
                          : late.reader("psb_mqtttest_tl");
      EXPECT_NE(r, nullptr) << late.err.message;
      if (notify == PSB_NOTIFY_LISTENER) {
        seen.wait_for(1, 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // anything more?
        if (!seen.messages.empty()) *first = seen.messages[0];
        return seen.count();
      }
      *first = take_one(r, notify, 1);
      if (first->empty()) return size_t(0);
      const void *data;
      size_t len;
      return size_t(1) + size_t(mqtt().take(r, 200 * kMs, &data, &len, &late.err) == 1);
    };
    {
      Ctx pub(cfg);
      psb_writer *w = pub.writer("psb_mqtttest_tl");
      ASSERT_NE(w, nullptr) << pub.err.message;
      for (uint32_t i = 1; i <= 3; ++i) {
        Bytes m = message(500, i);
        ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0);
      }
      // Only destroy_writer waits until the publishes are through (in listener mode
      // write() queues them for libmosquitto's thread): until then a late reader may get
      // an earlier retained message and the later ones live. Once all are through, it
      // gets exactly one: the last.
      Bytes first;
      size_t seen = 0;
      auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      do {
        seen = late_reader_sees(&first);
      } while ((seen != 1 || first.size() < 4 || seed_of(first.data()) != 3) &&
               std::chrono::steady_clock::now() < end);
      EXPECT_EQ(seen, 1u);
      EXPECT_TRUE(first == message(500, 3));
    }
    // The writer is gone: its retained message went with it.
    Bytes first;
    EXPECT_EQ(late_reader_sees(&first), 0u);
  }
}

TEST(MqttDriver, VolatileGivesALateReaderNothing) {
  Broker broker;
  Config cfg(broker.address(), PSB_NOTIFY_WAIT, PSB_RELIABLE);
  Ctx pub(cfg), sub(cfg);
  psb_writer *w = pub.writer("psb_mqtttest_vol");
  Bytes m = message(64, 1);
  ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &pub.err), 0);
  mqtt().destroy_writer(w);  // flushed: the broker has it (PUBACK) before we subscribe
  pub.writers.clear();
  psb_reader *r = sub.reader("psb_mqtttest_vol");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(take_one(r, PSB_NOTIFY_WAIT, 1).empty());
}

// --- the connection ----------------------------------------------------------------

// The client socket to the broker, found among this process's descriptors.
std::vector<int> sockets_to(int port) {
  std::vector<int> fds;
  for (auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    int fd = std::stoi(entry.path().filename().string());
    sockaddr_in peer{};
    socklen_t n = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &n) == 0 &&
        peer.sin_family == AF_INET && ntohs(peer.sin_port) == port)
      fds.push_back(fd);
  }
  return fds;
}

TEST(MqttDriver, TcpNoDelayIsSetOnTheClientSocket) {
  Broker broker;
  for (const char *nodelay : {"", "true", "false"}) {
    Config cfg(broker.address(), PSB_NOTIFY_WAIT);
    if (*nodelay) cfg.set("tcp_nodelay", nodelay);
    Ctx c(cfg);
    ASSERT_NE(c.ctx, nullptr) << c.err.message;
    auto fds = sockets_to(broker.port());
    ASSERT_EQ(fds.size(), 1u);
    int on = -1;
    socklen_t n = sizeof on;
    ASSERT_EQ(getsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &on, &n), 0);
    EXPECT_EQ(on != 0, std::string(nodelay) != "false") << "tcp_nodelay=" << nodelay;
  }
}

// Whether the broker still holds a connection on its port: a TCP socket of that local port
// in /proc/net/tcp that is not the listening one (state 0A). A client's DISCONNECT is
// logged once the broker read it, and the broker closes its side then.
bool broker_holds_a_connection(int port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    if (std::stoi(local.substr(local.find(':') + 1), nullptr, 16) == port && state != "0A")
      return true;
  }
  return false;
}

// Each context is its own client with its own id (run id, pid, a sequence number); the
// broker would drop the older of two with the same id. Close says DISCONNECT.
TEST(MqttDriver, EachContextIsOneClientThatDisconnectsCleanly) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER}) {
    SCOPED_TRACE(notify);
    Broker broker;
    const std::string prefix = "psb-mqtttest-" + std::to_string(getpid()) + "-";
    {
      Config cfg(broker.address(), notify);
      Ctx a(cfg), b(cfg);
      ASSERT_TRUE(a.ctx && b.ctx);
      EXPECT_EQ(sockets_to(broker.port()).size(), 2u);
      EXPECT_TRUE(broker_holds_a_connection(broker.port()));  // what the wait below reads
      Seen sa, sb;
      psb_reader *ra = notify == PSB_NOTIFY_LISTENER
                           ? a.reader("psb_mqtttest_a", &Seen::on_data, &sa)
                           : a.reader("psb_mqtttest_a");
      psb_reader *rb = notify == PSB_NOTIFY_LISTENER
                           ? b.reader("psb_mqtttest_b", &Seen::on_data, &sb)
                           : b.reader("psb_mqtttest_b");
      psb_writer *wa = b.writer("psb_mqtttest_a"), *wb = a.writer("psb_mqtttest_b");
      ASSERT_TRUE(ra && rb && wa && wb);
      Bytes m = message(64, 7);
      ASSERT_EQ(mqtt().write(wa, m.data(), m.size(), &b.err), 0);
      ASSERT_EQ(mqtt().write(wb, m.data(), m.size(), &a.err), 0);
      if (notify == PSB_NOTIFY_LISTENER) {
        EXPECT_TRUE(sa.wait_for(1) && sb.wait_for(1));
      } else {
        EXPECT_TRUE(take_one(ra, notify) == m);
        EXPECT_TRUE(take_one(rb, notify) == m);
      }
    }
    EXPECT_EQ(sockets_to(broker.port()).size(), 0u);
    // Stopped once it has read both: SIGTERM before then loses the last one's log line.
    for (int i = 0; i < 1000 && broker_holds_a_connection(broker.port()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    broker.stop();
    // Both clients, each under its own id, said DISCONNECT ("disconnected.", not
    // "closed its connection."), and neither took over the other's session.
    const std::string log = broker.log();
    std::vector<std::string> ids;
    for (size_t at = 0; (at = log.find(" as " + prefix, at)) != std::string::npos; ++at)
      ids.push_back(log.substr(at + 4, log.find(' ', at + 4) - at - 4));
    ASSERT_EQ(ids.size(), 2u) << log;
    EXPECT_NE(ids[0], ids[1]);
    for (const std::string &id : ids) {
      EXPECT_TRUE(contains(log, "Client " + id + " disconnected.")) << id << "\n" << log;
      EXPECT_FALSE(contains(log, "Client " + id + " closed its connection.")) << log;
    }
    EXPECT_FALSE(contains(log, "already connected")) << log;
  }
}

// A context the caller closes with its endpoints still open: they are destroyed too.
TEST(MqttDriver, CloseDestroysEndpointsLeftOpen) {
  Broker broker;
  for (uint32_t notify : {PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER}) {
    Config cfg(broker.address(), notify, PSB_RELIABLE, PSB_TRANSIENT_LOCAL);
    psb_error err{};
    psb_context *ctx = mqtt().open(&cfg.cfg, &err);
    ASSERT_NE(ctx, nullptr);
    Seen seen;
    ASSERT_NE(
        mqtt().create_reader(ctx, "psb_mqtttest_left",
                             notify == PSB_NOTIFY_LISTENER ? &Seen::on_data : nullptr, &seen, &err),
        nullptr);
    psb_writer *w = mqtt().create_writer(ctx, "psb_mqtttest_left", &err);
    Bytes m = message(64, 1);
    ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &err), 0);
    mqtt().close(ctx);
    EXPECT_EQ(sockets_to(broker.port()).size(), 0u);
    // The writer went with it, and took its retained message along.
    Config plain(broker.address(), PSB_NOTIFY_WAIT, PSB_RELIABLE, PSB_TRANSIENT_LOCAL);
    Ctx late(plain);
    psb_reader *r = late.reader("psb_mqtttest_left");
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(take_one(r, PSB_NOTIFY_WAIT, 1).empty());
  }
}

// --- a broker that dies -----------------------------------------------------------

// Writes m until write() stops succeeding, for up to 5 s (the client learns that the
// broker died on a later call); what the last write() returned, its error in err.
namespace {
int write_until_it_fails(psb_writer *w, const Bytes &m, psb_error &err) {
  int wrote = 0;
  for (int i = 0; i < 500 && wrote == 0; ++i) {
    wrote = mqtt().write(w, m.data(), m.size(), &err);
    if (wrote == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return wrote;
}
}  // namespace

// take() and write() return -1 naming the broker, in every mode; nothing hangs (the
// test's own timeout would say so), and close() still returns.
TEST(MqttDriver, ABrokerThatDiesFailsWriteAndTakeWithItsAddress) {
  for (uint32_t notify : {PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL, PSB_NOTIFY_LISTENER}) {
    for (uint32_t rel : {PSB_BEST_EFFORT, PSB_RELIABLE}) {
      SCOPED_TRACE(std::to_string(notify) + "/" + std::to_string(rel));
      Broker broker;
      Config cfg(broker.address(), notify, rel);
      Ctx c(cfg);
      Seen seen;
      psb_reader *r = notify == PSB_NOTIFY_LISTENER
                          ? c.reader("psb_mqtttest_die", &Seen::on_data, &seen)
                          : c.reader("psb_mqtttest_die");
      psb_writer *w = c.writer("psb_mqtttest_die");
      ASSERT_TRUE(r && w) << c.err.message;
      Bytes m = message(64, 1);
      ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &c.err), 0);
      if (notify != PSB_NOTIFY_LISTENER) {
        ASSERT_TRUE(take_one(r, notify) == m);
      }
      broker.kill_now();
      const std::string expected = "broker at " + broker.address();
      if (notify != PSB_NOTIFY_LISTENER) {
        const void *data;
        size_t len;
        psb_error err{};
        int got = 0;
        for (int i = 0; i < 1000 && got == 0; ++i)
          got = mqtt().take(r, notify == PSB_NOTIFY_WAIT ? 100 * kMs : 0, &data, &len, &err);
        ASSERT_EQ(got, -1);
        EXPECT_TRUE(contains(err.message, "mqtt: lost the connection to the " + expected))
            << err.message;
      }
      psb_error err{};
      ASSERT_EQ(write_until_it_fails(w, m, err), -1);
      EXPECT_TRUE(contains(err.message, expected)) << err.message;
      // Later calls keep failing the same way.
      EXPECT_EQ(mqtt().write(w, m.data(), m.size(), &err), -1);
      EXPECT_TRUE(contains(err.message, expected)) << err.message;
    }
  }
}

// A writer-only connection (the node's pub) learns of the loss from write() alone.
TEST(MqttDriver, AWriterAloneLearnsThatTheBrokerDied) {
  for (uint32_t rel : {PSB_BEST_EFFORT, PSB_RELIABLE}) {
    Broker broker;
    Ctx c(Config(broker.address(), PSB_NOTIFY_WAIT, rel));
    psb_writer *w = c.writer("psb_mqtttest_alone");
    ASSERT_NE(w, nullptr);
    Bytes m = message(64, 1);
    ASSERT_EQ(mqtt().write(w, m.data(), m.size(), &c.err), 0);
    broker.kill_now();
    psb_error err{};
    ASSERT_EQ(write_until_it_fails(w, m, err), -1);
    EXPECT_TRUE(contains(err.message, "broker at " + broker.address())) << err.message;
  }
}

// --- signals -----------------------------------------------------------------------

// A signal during a wait ends it with "no sample" (the node stops runs with signals).
TEST(MqttDriver, ASignalEndsAWaitWithNoSample) {
  Broker broker;
  Ctx c(Config(broker.address(), PSB_NOTIFY_WAIT));
  psb_reader *r = c.reader("psb_mqtttest_sig");
  ASSERT_NE(r, nullptr);
  const auto got = psb_test::interrupted_take(r, 60'000 * kMs);
  EXPECT_EQ(got.result, 0);
  // Not a timing measurement: only that the 60 s wait did not run its course.
  EXPECT_LT(got.took, std::chrono::seconds(30));
}
