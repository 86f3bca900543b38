// Tests of the fastdds driver through its C ABI only: the built .so is loaded with
// dlopen, as psbench-node does. Writer and reader live in two contexts (two
// DomainParticipants) of this process, the node's intra-process placement, except in
// the drain and counter tests, whose reader is this binary run again as a child
// (--reader-child) so that it can be stopped and so that data crosses a transport;
// the inter-process runs over each transport are in tests/test_driver_fastdds.py.
// No timing assertions: waits have generous bounds only so that a bug fails
// instead of hanging.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_across_hosts.hpp"
#include "test_config.hpp"
#include "test_process.hpp"
#include "test_received.hpp"
#include "test_stopped_reader.hpp"

extern char **environ;

namespace {

const psb_driver &fastdds() { return psb_test::driver_under_test(); }

std::string new_run_id() {
  static int n = 0;
  return "fd" + std::to_string(getpid()) + "x" + std::to_string(n++);
}

constexpr int64_t kSecond = 1'000'000'000;
constexpr size_t kHeader = 32;

// A psb_config that owns its strings. Default: builtin transport, wait, reliable,
// volatile, history not set, 64-byte messages.
struct Cfg {
  std::string run_id = new_run_id();
  std::string transport = "builtin";
  std::map<std::string, std::string> options;
  std::vector<psb_option> opts;
  psb_config c{};

  Cfg() {
    c.notify = PSB_NOTIFY_WAIT;
    c.qos = {PSB_RELIABLE, PSB_VOLATILE, 0, 0};
    c.max_payload = 64;
  }
  explicit Cfg(psb_qos qos, const char *over = "builtin") : Cfg() {
    c.qos = qos;
    transport = over;
  }
  const psb_config *get() { return psb_test::filled(c, run_id, transport, options, opts); }
};

// The node's header (docs/node.md), then a payload derived from seq.
std::vector<uint8_t> message(uint64_t seq, size_t size) {
  std::vector<uint8_t> m(size);
  const int64_t send_ns = int64_t(seq) * 1000 + 7, intended_ns = int64_t(seq) * 1000 + 3;
  const uint32_t writer_id = 42, flags = 8;
  std::memcpy(&m[0], &seq, 8);
  std::memcpy(&m[8], &send_ns, 8);
  std::memcpy(&m[16], &intended_ns, 8);
  std::memcpy(&m[24], &writer_id, 4);
  std::memcpy(&m[28], &flags, 4);
  for (size_t i = kHeader; i < size; ++i) m[i] = uint8_t(seq * 131 + i * 7);
  return m;
}

uint64_t seq_of(const void *data) {
  uint64_t seq;
  std::memcpy(&seq, data, 8);
  return seq;
}

using psb_test::wait_until;

// One context (a participant) with at most one writer and one reader, closed in order.
struct Side {
  explicit Side(Cfg &cfg) { ctx = fastdds().open(cfg.get(), &err); }
  ~Side() {
    if (reader) fastdds().destroy_reader(reader);
    if (writer) fastdds().destroy_writer(writer);
    if (ctx) fastdds().close(ctx);
  }
  psb_writer *make_writer(const char *topic) {
    return writer = fastdds().create_writer(ctx, topic, &err);
  }
  psb_reader *make_reader(const char *topic, psb_on_data cb = nullptr, void *user = nullptr) {
    return reader = fastdds().create_reader(ctx, topic, cb, user, &err);
  }
  psb_error err{};
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
};

bool matched(const Side &w, const Side &r) {
  return wait_until([&] {
    return fastdds().matched_readers(w.writer) >= 1 && fastdds().matched_writers(r.reader) >= 1;
  });
}

// w's writer and r's reader of topic, matched.
bool make_matched(Side &w, Side &r, const char *topic) {
  return w.make_writer(topic) && r.make_reader(topic) && matched(w, r);
}

// Takes one message within 10 s (wait or poll); empty on none.
std::vector<uint8_t> take_one(psb_reader *reader, int64_t timeout_ns) {
  const void *data = nullptr;
  size_t len = 0;
  psb_error err{};
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < end) {
    const int r = fastdds().take(reader, timeout_ns, &data, &len, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r < 0) return {};
    if (r == 1) return {(const uint8_t *)data, (const uint8_t *)data + len};
  }
  return {};
}

// Writes messages 0 to n-1 of 64 bytes.
void write_n(Side &w, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const auto m = message(i, 64);
    ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
}

// A writer's and a reader's context on cfg, matched on topic: each of count messages of
// size bytes arrives intact (what: the case, for a failure's message).
void expect_round_trips(Cfg &cfg, const char *topic, size_t size, uint64_t count,
                        const std::string &what) {
  Side w(cfg), r(cfg);
  ASSERT_TRUE(w.ctx && r.ctx) << what << ": " << w.err.message;
  ASSERT_TRUE(w.make_writer(topic) && r.make_reader(topic)) << what << ": " << w.err.message;
  ASSERT_TRUE(matched(w, r)) << what;
  for (uint64_t i = 0; i < count; ++i) {
    const auto m = message(i, size);
    ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
    EXPECT_TRUE(take_one(r.reader, kSecond) == m) << what;
  }
}

std::string refusal(Cfg &cfg) {
  psb_error err{};
  if (psb_test::check(fastdds(), cfg.get(), &err) == 0) return "(accepted)";
  return err.message;
}

}  // namespace

TEST(FastddsDriver, TableDescribesTheDriver) {
  const psb_driver &d = fastdds();
  EXPECT_EQ(d.abi_version, PSB_ABI_VERSION);
  EXPECT_STREQ(d.name, "fastdds");
  EXPECT_NE(std::string(d.version()).find("2.9"), std::string::npos) << d.version();
  EXPECT_STREQ(d.caps.transports[0], "builtin");
  EXPECT_EQ(d.caps.max_payload, 4u << 20);
}

TEST(FastddsDriver, BytesOfEverySizeRoundTripIntactUpToFourMiB) {
  Cfg cfg;
  cfg.c.max_payload = 4u << 20;
  Side w(cfg), r(cfg);
  ASSERT_TRUE(w.ctx && r.ctx) << w.err.message << r.err.message;
  ASSERT_TRUE(w.make_writer("psb_t_sizes") && r.make_reader("psb_t_sizes"))
      << w.err.message << r.err.message;
  ASSERT_TRUE(matched(w, r));
  uint64_t seq = 0;
  for (size_t size : {size_t(32), size_t(33), size_t(1000), size_t(65536), size_t(1) << 20,
                      size_t(4) << 20, size_t(40)}) {
    const auto sent = message(seq++, size);
    ASSERT_EQ(fastdds().write(w.writer, sent.data(), sent.size(), &w.err), 0) << w.err.message;
    const auto got = take_one(r.reader, kSecond);
    ASSERT_EQ(got.size(), size);
    EXPECT_TRUE(got == sent) << "bytes differ at size " << size;
  }
}

TEST(FastddsDriver, PollNeverBlocksAndWaitTimesOut) {
  Cfg cfg;
  cfg.c.notify = PSB_NOTIFY_POLL;
  Side r(cfg);
  ASSERT_TRUE(r.ctx && r.make_reader("psb_t_empty")) << r.err.message;
  const void *data;
  size_t len;
  EXPECT_EQ(fastdds().take(r.reader, 0, &data, &len, &r.err), 0);
  EXPECT_EQ(fastdds().take(r.reader, 20'000'000, &data, &len, &r.err), 0);
}

TEST(FastddsDriver, PollDeliversEveryReliableMessageInOrder) {
  Cfg cfg;
  cfg.c.notify = PSB_NOTIFY_POLL;
  cfg.c.qos = {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0};
  cfg.c.max_payload = 2000;
  Side w(cfg), r(cfg);
  ASSERT_TRUE(make_matched(w, r, "psb_t_poll")) << w.err.message << r.err.message;
  for (uint64_t i = 0; i < 200; ++i) {
    const auto m = message(i, 32 + i * 9);
    ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
  for (uint64_t i = 0; i < 200; ++i) {
    const auto got = take_one(r.reader, 0);
    ASSERT_TRUE(got == message(i, 32 + i * 9)) << "message " << i;
  }
}

TEST(FastddsDriver, ListenerGetsEveryMessageAndStopsOnDestroy) {
  struct Seen {
    std::mutex mu;
    std::vector<std::vector<uint8_t>> messages;
  } seen;
  auto cb = [](void *user, const void *data, size_t len) {
    auto *s = static_cast<Seen *>(user);
    std::lock_guard lock(s->mu);
    s->messages.emplace_back((const uint8_t *)data, (const uint8_t *)data + len);
  };
  Cfg cfg;
  cfg.c.notify = PSB_NOTIFY_LISTENER;
  cfg.c.qos = {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0};
  cfg.c.max_payload = 100000;
  Side w(cfg), r(cfg);
  ASSERT_TRUE(w.make_writer("psb_t_listener") && r.make_reader("psb_t_listener", cb, &seen));
  ASSERT_TRUE(matched(w, r));
  for (uint64_t i = 0; i < 50; ++i) {
    const auto m = message(i, 100 + i * 1000);
    ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  }
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard lock(seen.mu);
    return seen.messages.size() >= 50;
  }));
  fastdds().destroy_reader(r.reader);
  r.reader = nullptr;
  const auto m = message(99, 100);
  ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0) << w.err.message;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::lock_guard lock(seen.mu);
  ASSERT_EQ(seen.messages.size(), 50u);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_TRUE(seen.messages[i] == message(i, 100 + i * 1000));
}

TEST(FastddsDriver, ACallbackOutsideListenerModeIsRefused) {
  Cfg cfg;  // wait mode: a callback is a caller error
  Side r(cfg);
  auto cb = [](void *, const void *, size_t) {};
  EXPECT_EQ(r.make_reader("psb_t_cb", cb, nullptr), nullptr);
  EXPECT_NE(std::string(r.err.message).find("fastdds: "), std::string::npos);
}

TEST(FastddsDriver, MatchedCountsFollowTheRemoteEndpoints) {
  Cfg cfg;
  Side w(cfg), r(cfg);
  ASSERT_TRUE(w.make_writer("psb_t_match"));
  EXPECT_EQ(fastdds().matched_readers(w.writer), 0);
  ASSERT_TRUE(r.make_reader("psb_t_match"));
  ASSERT_TRUE(matched(w, r));
  EXPECT_EQ(fastdds().matched_readers(w.writer), 1);
  EXPECT_EQ(fastdds().matched_writers(r.reader), 1);
  fastdds().destroy_reader(r.reader);
  r.reader = nullptr;
  EXPECT_TRUE(wait_until([&] { return fastdds().matched_readers(w.writer) == 0; }));
}

TEST(FastddsDriver, WriterAndReaderOfOneTopicInOneContext) {
  Cfg cfg;
  Side s(cfg);
  ASSERT_TRUE(s.make_writer("psb_t_self") && s.make_reader("psb_t_self")) << s.err.message;
  ASSERT_TRUE(matched(s, s));
  const auto m = message(5, 64);
  ASSERT_EQ(fastdds().write(s.writer, m.data(), m.size(), &s.err), 0);
  EXPECT_TRUE(take_one(s.reader, kSecond) == m);
}

TEST(FastddsDriver, ComplexRoundTripRebuildsTheHeader) {
  for (const char *elements : {"1", "16", "3000"}) {
    Cfg cfg;
    cfg.c.max_payload = 32;
    cfg.options = {{"type", "complex"}, {"elements", elements}};
    expect_round_trips(cfg, "psb_t_complex", 32, 3, std::string("elements=") + elements);
  }
}

TEST(FastddsDriver, ComplexReaderRefusesASampleOfAnotherShape) {
  Cfg wcfg, rcfg;
  wcfg.c.max_payload = rcfg.c.max_payload = 32;
  rcfg.run_id = wcfg.run_id;  // same domain
  wcfg.options = {{"type", "complex"}, {"elements", "8"}};
  rcfg.options = {{"type", "complex"}, {"elements", "16"}};
  Side w(wcfg), r(rcfg);
  ASSERT_TRUE(make_matched(w, r, "psb_t_shape")) << w.err.message << r.err.message;
  const auto m = message(1, 32);
  ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0);
  const void *data;
  size_t len;
  int got = 0;
  ASSERT_TRUE(wait_until([&] {
    got = fastdds().take(r.reader, 100'000'000, &data, &len, &r.err);
    return got != 0;
  }));
  EXPECT_EQ(got, -1);
  EXPECT_NE(std::string(r.err.message).find("8 Outer elements, expected elements=16"),
            std::string::npos)
      << r.err.message;
}

TEST(FastddsDriver, ComplexWriterTakesTheHeaderOnly) {
  Cfg cfg;
  cfg.c.max_payload = 32;
  cfg.options = {{"type", "complex"}};
  Side w(cfg);
  ASSERT_TRUE(w.make_writer("psb_t_complex64"));
  const auto m = message(1, 64);
  EXPECT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), -1);
  EXPECT_NE(std::string(w.err.message).find("use --size 32"), std::string::npos);
}

// A transient_local late joiner gets the writer's last N samples of keep_last:N.
TEST(FastddsDriver, TransientLocalLateJoinerGetsTheLastSamples) {
  {
    Cfg cfg({PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 5});
    Side w(cfg);
    ASSERT_TRUE(w.make_writer("psb_t_late")) << w.err.message;
    ASSERT_NO_FATAL_FAILURE(write_n(w, 12));
    Side r(cfg);
    ASSERT_TRUE(r.make_reader("psb_t_late")) << r.err.message;
    std::vector<uint64_t> seqs;
    for (int i = 0; i < 5; ++i) {
      const auto got = take_one(r.reader, kSecond);
      ASSERT_EQ(got.size(), 64u) << "sample " << i;
      EXPECT_TRUE(got == message(seq_of(got.data()), 64));
      seqs.push_back(seq_of(got.data()));
    }
    EXPECT_EQ(seqs, (std::vector<uint64_t>{7, 8, 9, 10, 11}));
    const void *data;
    size_t len;
    EXPECT_EQ(fastdds().take(r.reader, 50'000'000, &data, &len, &r.err), 0) << "a sixth sample";
  }
}

TEST(FastddsDriver, VolatileReaderGetsNothingWrittenBefore) {
  Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 5});
  Side w(cfg);
  ASSERT_TRUE(w.make_writer("psb_t_volatile"));
  const auto m = message(1, 64);
  ASSERT_EQ(fastdds().write(w.writer, m.data(), m.size(), &w.err), 0);
  Side r(cfg);
  ASSERT_TRUE(r.make_reader("psb_t_volatile"));
  ASSERT_TRUE(matched(w, r));
  const void *data;
  size_t len;
  EXPECT_EQ(fastdds().take(r.reader, 200'000'000, &data, &len, &r.err), 0);
}

TEST(FastddsDriver, DeepKeepLastAboveTheDefaultResourceLimits) {
  Cfg cfg({PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 1000});  // default limit 400
  Side w(cfg);
  ASSERT_TRUE(w.make_writer("psb_t_deep")) << w.err.message;
  ASSERT_NO_FATAL_FAILURE(write_n(w, 1000));
  Side r(cfg);
  ASSERT_TRUE(r.make_reader("psb_t_deep")) << r.err.message;
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(seq_of(take_one(r.reader, kSecond).data()), i);
}

class FastddsTransport : public testing::TestWithParam<const char *> {};

INSTANTIATE_TEST_SUITE_P(Each, FastddsTransport,
                         testing::Values("builtin", "udp", "multicast", "shm"));

TEST_P(FastddsTransport, OpensAndDelivers) {
  Cfg cfg;
  cfg.transport = GetParam();
  expect_round_trips(cfg, "psb_t_transport", 64, 1, cfg.transport);
}

namespace {

std::string write_file(const std::string &name, const std::string &text) {
  const std::string path = testing::TempDir() + name;
  FILE *f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

const char *kProfiles = R"(<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <transport_descriptors>
    <transport_descriptor>
      <transport_id>psb_test_udp</transport_id>
      <type>UDPv4</type>
      <interfaceWhiteList><address>127.0.0.1</address></interfaceWhiteList>
    </transport_descriptor>
  </transport_descriptors>
  <participant profile_name="psb_test_udp_only">
    <rtps>
      <userTransports><transport_id>psb_test_udp</transport_id></userTransports>
      <useBuiltinTransports>false</useBuiltinTransports>
    </rtps>
  </participant>
</profiles>
)";

}  // namespace

TEST(FastddsDriver, VendorConfigurationRunsWithTransportConfig) {
  const std::string path = write_file("fastdds_profiles.xml", kProfiles);
  Cfg cfg;
  cfg.transport = "config";
  cfg.options = {{"profiles_file", path}, {"participant_profile", "psb_test_udp_only"}};
  ASSERT_EQ(refusal(cfg), "(accepted)");
  expect_round_trips(cfg, "psb_t_config", 64, 1, "config");
}

// ABI 6: across hosts (local_address set), builtin, udp and multicast put UDP on the
// interface of local_address. Here that is lo's 127.0.0.1, so that one process can show
// that Fast DDS creates the participants the driver asks for (data between two
// participants of one process goes by Fast DDS's intraprocess delivery whatever the
// transport); real crossings (two emulated hosts) are in tests/test_cross_hosts_dds.py.
TEST(FastddsDriver, AcrossHostsTransportsOpenOnTheInterfaceOfTheLocalAddress) {
  for (const char *transport : {"builtin", "udp", "multicast"}) {
    Cfg cfg;
    cfg.transport = transport;
    psb_test::expect_delivery_across_hosts_on_loopback(cfg);
  }
}

TEST(FastddsDriver, RefusesWhatItCannotHonourWithItsReason) {
  const std::string good = write_file("fastdds_profiles.xml", kProfiles);
  const std::string bad = write_file("fastdds_broken.xml", "<profiles><participant");
  struct Case {
    std::string transport;
    std::map<std::string, std::string> options;
    uint64_t max_payload;
    uint32_t use_loan;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"builtin",
       {{"type", "complex"}},
       64,
       0,
       "fastdds: type complex is sized by option elements=N; use --size 32"},
      {"builtin", {{"elements", "4"}}, 64, 0, "option elements applies to type=complex only"},
      {"builtin", {{"type", "complex"}, {"elements", "0"}}, 32, 0, "elements=N with 1 <= N"},
      {"builtin", {{"type", "json"}}, 64, 0, "valid values: bytes (default), complex"},
      {"builtin", {{"profiles_file", good}}, 64, 0, "needs --transport config"},
      {"config", {}, 64, 0, "--transport config needs --option profiles_file=PATH"},
      {"builtin", {{"participant_profile", "x"}}, 64, 0, "needs option profiles_file=PATH"},
      {"config", {{"profiles_file", bad}}, 64, 0, "cannot load profiles_file"},
      {"config",
       {{"profiles_file", good}, {"participant_profile", "nope"}},
       64,
       0,
       "participant_profile 'nope' is not in profiles_file"},
      {"builtin", {{"domain_id", "233"}}, 64, 0, "domain_id=N with 0 <= N <= 232"},
      {"builtin", {{"colour", "red"}}, 64, 0, "unknown option 'colour'"},
      {"builtin", {}, 64, 1, "loaned writes are not provided"},
      {"tcp", {}, 64, 0, "transport 'tcp' is not supported"},
      {"builtin", {}, 64, 0, "transient_local needs reliability reliable"},
      {"builtin", {}, 64, 0, "keep_last:N needs 1 <= N"},
  };
  for (const Case &c : cases) {
    Cfg cfg;
    if (c.expected.find("transient_local") != std::string::npos)
      cfg.c.qos = {PSB_BEST_EFFORT, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 1};
    if (c.expected.find("keep_last") != std::string::npos)
      cfg.c.qos = {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 0};
    cfg.transport = c.transport;
    cfg.options = c.options;
    cfg.c.max_payload = c.max_payload;
    cfg.c.use_loan = c.use_loan;
    const std::string got = refusal(cfg);
    EXPECT_NE(got.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "', got '" << got << "'";
    EXPECT_EQ(got.rfind("fastdds: ", 0), 0u) << got;
  }
}

// --- ABI 4: drain and counters ---------------------------------------------------

namespace {

// Collects what counters() hands over.
// What the driver's writer_counters() or reader_counters() hands over.
template <class Endpoint>
std::map<std::string, uint64_t> counters_of(Endpoint *endpoint) {
  return psb_test::counters_of(fastdds(), endpoint);
}

// The sequence number of the next message (within 10 s), or ~0 if none came.
uint64_t next_seq(psb_reader *reader) {
  const auto m = take_one(reader, kSecond);
  return m.size() >= 8 ? seq_of(m.data()) : ~0ull;
}

}  // namespace

// Intra-process (two participants in one process: Fast DDS's intraprocess delivery,
// on by default), reliable keep_all. The default resource limits give the reader of an
// unkeyed topic room for max_samples = 5000 (the 400 per instance apply to keyed
// topics only): of 5450 written to a reader that takes nothing, 450 are rejected
// (SAMPLE_REJECTED counts them, each time they are offered) and stay unacknowledged, so drain times
// out. Fast DDS 2.9.1 then almost never repairs them: after the reader took its 5000, nothing
// more arrives, and the writer never drains (docs/dds.md); psbench's inter-process runs repair
// the same rejections (see the reader-child tests below).
TEST(FastddsDriver, IntraProcessReliableReaderNeverGetsWhatItRejected) {
  Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0});
  Side w(cfg), r(cfg);
  ASSERT_TRUE(make_matched(w, r, "psb_t_drain")) << w.err.message << r.err.message;
  write_n(w, 5450);
  EXPECT_EQ(fastdds().drain(w.writer, 1'000'000, &w.err), 0) << w.err.message;
  for (uint64_t i = 0; i < 5000; ++i) ASSERT_EQ(next_seq(r.reader), i);
  // Nearly always nothing more arrives within 5 s (> 1 heartbeat); on a loaded machine a
  // repair was once seen to deliver the rejected ones after all. Either way what comes
  // comes in order, once, and the writer drains exactly when all 450 came.
  uint64_t more = 0;
  for (auto m = take_one(r.reader, 5 * kSecond); m.size() >= 8; m = take_one(r.reader, kSecond))
    ASSERT_EQ(seq_of(m.data()), 5000 + more++);
  EXPECT_LE(more, 450u);
  EXPECT_EQ(fastdds().drain(w.writer, kSecond, &w.err), more == 450 ? 1 : 0) << w.err.message;
  // Each of the 450 rejected at least once, when written; a repair the writer attempted
  // while the reader was still full offers some again (seen: 450, 663, 900: a repair
  // round need not offer all 450, so no multiple is asserted).
  const uint64_t rejected = counters_of(r.reader).at("sample_rejected");
  EXPECT_GE(rejected, 450u);
}

TEST(FastddsDriver, DrainOfAWriterWithoutReadersReturnsDrainedAtOnce) {
  for (uint32_t rel : {PSB_RELIABLE, PSB_BEST_EFFORT}) {
    Cfg cfg({rel, PSB_VOLATILE, PSB_KEEP_ALL, 0});
    Side w(cfg);
    ASSERT_TRUE(w.make_writer("psb_t_drain_alone")) << w.err.message;
    write_n(w, 10);
    EXPECT_EQ(fastdds().drain(w.writer, 0, &w.err), 1) << w.err.message;
  }
}

// Intra-process, best effort, keep_all, nothing taken: the reader keeps 5000
// (max_samples) of 5600 and Fast DDS 2.9.1 drops the other 600 without counting them,
// neither as rejected nor as lost (across processes it counts them, see below).
TEST(FastddsDriver, IntraProcessBestEffortDropsWhatDoesNotFitUncounted) {
  Cfg cfg({PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_ALL, 0});
  Side w(cfg), r(cfg);
  ASSERT_TRUE(make_matched(w, r, "psb_t_rejected")) << w.err.message << r.err.message;
  write_n(w, 5600);
  EXPECT_EQ(fastdds().drain(w.writer, 5 * kSecond, &w.err), 1) << w.err.message;
  const auto c = counters_of(r.reader);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.at("sample_rejected"), 0u);
  EXPECT_EQ(c.at("sample_lost"), 0u);
  EXPECT_TRUE(counters_of(w.writer).empty());  // nothing a writer counts means undelivered
  uint64_t taken = 0;
  const void *data;
  size_t len;
  while (taken <= 5600 && fastdds().take(r.reader, 0, &data, &len, &r.err) == 1) ++taken;
  EXPECT_EQ(taken, 5000u);
}

// Best effort, keep_last 1, nothing taken while 1000 are written: 999 are overwritten
// in the reader's history, which DDS does not count as lost or rejected.
TEST(FastddsDriver, CountersDoNotCountSamplesAKeepLastHistoryReplaced) {
  Cfg cfg({PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_LAST, 1});
  Side w(cfg), r(cfg);
  ASSERT_TRUE(make_matched(w, r, "psb_t_overwrite")) << w.err.message << r.err.message;
  write_n(w, 1000);
  EXPECT_EQ(next_seq(r.reader), 999u);
  const auto c = counters_of(r.reader);
  EXPECT_EQ(c.at("sample_lost"), 0u);
  EXPECT_EQ(c.at("sample_rejected"), 0u);
}

// --- the reader child ----------------------------------------------------------------

namespace {

constexpr const char *kChildTopic = "psb_t_child";

// This binary run as `--reader-child RUN TRANSPORT RELIABILITY HISTORY DEPTH`: a
// wait-mode reader on kChildTopic prints "matched" once it sees a writer, takes until a
// message with flag 4 (end) or 10 s without any, then prints "received N", "last_seq S"
// (the last message before the end, if any) and each of its counters as "NAME VALUE".
// Every wait is bounded.
int reader_child(char **argv) {
  Cfg cfg;
  cfg.run_id = argv[0];
  cfg.transport = argv[1];
  cfg.c.qos = {uint32_t(std::atoi(argv[2])), PSB_VOLATILE, uint32_t(std::atoi(argv[3])),
               uint32_t(std::atoi(argv[4]))};
  Side s(cfg);
  if (!s.ctx || !s.make_reader(kChildTopic)) {
    std::fprintf(stderr, "reader child: %s\n", s.err.message);
    return 1;
  }
  if (!wait_until([&] { return fastdds().matched_writers(s.reader) >= 1; })) return 2;
  std::printf("matched\n");
  std::fflush(stdout);
  return psb_test::report_until_end(fastdds(), s.reader, &s.err);
}

// A reader child: this binary with --reader-child and the configuration's QoS.
bool start_reader_child(psb_test::ChildReport &child, const Cfg &cfg) {
  return child.start({"--reader-child", cfg.run_id, cfg.transport,
                      std::to_string(cfg.c.qos.reliability), std::to_string(cfg.c.qos.history),
                      std::to_string(cfg.c.qos.history_depth)});
}

std::vector<uint8_t> end_message() { return psb_test::as_end_marker(message(~0ull, 64)); }

// Writes the end marker on w's writer: the write's result (0: written).
int write_end(Side &w) {
  const auto end = end_message();
  return fastdds().write(w.writer, end.data(), end.size(), &w.err);
}

// Starts a reader child, a writer on its topic, waits until both matched, stops the
// child (SIGSTOP: a reader that takes and acknowledges nothing from now on), then writes
// messages 0 to n-1.
void write_n_to_a_stopped_reader_child(Cfg &cfg, psb_test::ChildReport &child, Side &w,
                                       uint64_t n) {
  ASSERT_TRUE(start_reader_child(child, cfg));
  ASSERT_TRUE(w.make_writer(kChildTopic)) << w.err.message;
  ASSERT_EQ(child.line(), "matched");
  ASSERT_TRUE(wait_until([&] { return fastdds().matched_readers(w.writer) >= 1; }));
  ASSERT_EQ(kill(child.pid, SIGSTOP), 0);
  write_n(w, n);
}

}  // namespace

// A reader in a stopped process acknowledges nothing: drain times out (0) while it is
// stopped and returns drained (1) once it runs again; it then has every sample.
TEST(FastddsDriver, DrainTimesOutWhileTheReaderIsStoppedAndDrainsWhenItRuns) {
  Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0}, "udp");
  psb_test::ChildReport child;
  Side w(cfg);
  write_n_to_a_stopped_reader_child(cfg, child, w, 200);
  if (HasFatalFailure()) return;
  EXPECT_EQ(fastdds().drain(w.writer, 1'000'000, &w.err), 0) << w.err.message;
  ASSERT_EQ(kill(child.pid, SIGCONT), 0);
  EXPECT_EQ(fastdds().drain(w.writer, 20 * kSecond, &w.err), 1) << w.err.message;
  ASSERT_EQ(write_end(w), 0);
  auto got = child.finish();
  EXPECT_EQ(got["exit"], 0u);
  EXPECT_EQ(got["received"], 200u);
  EXPECT_EQ(got["sample_lost"], 0u);
}

// Reliable keep_last:3 into a reader process stopped while 20,000 are written: the
// writer overwrites what is unacknowledged and never waits, so the reader gets the
// newest (the last one written among them) and a fraction of the rest. Ignoring the
// depth (keep_all) would deliver all 20,000, as above; keeping the oldest would miss
// the last.
TEST(FastddsDriver, ReliableKeepLastGivesAStoppedReaderTheNewest) {
  constexpr uint64_t kWritten = 20'000;
  Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 3}, "udp");
  psb_test::ChildReport child;
  Side w(cfg);
  write_n_to_a_stopped_reader_child(cfg, child, w, kWritten);
  if (HasFatalFailure()) return;
  psb_test::expect_the_newest_after_keep_last(
      child, kWritten, [&] { return write_end(w) == 0; },
      [&] { return fastdds().drain(w.writer, 20 * kSecond, &w.err); });
}

// Best effort over UDP into a stopped reader: its socket buffer overflows and the
// kernel drops the rest. Fast DDS's best-effort reader sees the gaps in the sequence
// numbers when it runs again and counts them in SAMPLE_LOST.
TEST(FastddsDriver, CountersReportWhatABestEffortReaderMissed) {
  constexpr uint64_t kWritten = 20000;
  Cfg cfg({PSB_BEST_EFFORT, PSB_VOLATILE, PSB_KEEP_ALL, 0}, "udp");
  psb_test::ChildReport child;
  Side w(cfg);
  write_n_to_a_stopped_reader_child(cfg, child, w, kWritten);
  if (HasFatalFailure()) return;
  auto got = psb_test::best_effort_report(child, kWritten, [&] { return write_end(w) == 0; });
  EXPECT_GT(got["sample_lost"], 0u);
  EXPECT_EQ(got["received"] + got["sample_lost"], kWritten);  // every gap counted once
}

int main(int argc, char **argv) {
  if (argc == 7 && std::strcmp(argv[1], "--reader-child") == 0) return reader_child(argv + 2);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
