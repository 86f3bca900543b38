// The conformance suite: what every driver must do, run against every driver of the build
// through its C ABI (loaded with dlopen, as psbench-node loads it). A driver's own tests
// keep only what is specific to its middleware.
//
// Services: a driver whose manifest.toml declares, for its default transport, a broker
// (broker = true) runs only when PSBENCH_BROKER_<NAME>=host:port names a running one; a
// driver needing another daemon (e.g. iox-roudi) runs only when a process of that name is
// running. Otherwise its tests that open a context are skipped, saying which;
// the table and check() are tested all the same.
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "manifest_services.hpp"
#include "psbench/driver.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kSamples = 100;
constexpr uint64_t kSizeCap = 1u << 20;

struct Dut {
  std::string name;
  const psb_driver *t = nullptr;
  std::string skip;                 // why this driver cannot run here; empty: it can
  std::vector<std::string> option;  // key, value pairs for every config
  bool brokered = false;            // its default transport goes through a broker
  std::string transport;            // the driver's first, or PSBENCH_TRANSPORT_<NAME>
};

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

bool process_running(const std::string &exe) {
  DIR *d = opendir("/proc");
  bool found = false;
  for (dirent *e; d != nullptr && !found && (e = readdir(d)) != nullptr;) {
    std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
    std::string c;
    if (std::getline(comm, c) && c == exe.substr(0, 15)) found = true;
  }
  if (d) closedir(d);
  return found;
}

Dut load(const std::string &name) {
  Dut d;
  d.name = name;
  const std::string path =
      std::string(PSBENCH_DRIVER_DIR) + "/" + name + "/libpsbench-" + name + ".so";
  void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: middleware threads
  if (h == nullptr) {
    d.skip = std::string("not loadable: ") + dlerror();
    return d;
  }
  auto entry = reinterpret_cast<psb_driver_entry_fn>(dlsym(h, PSB_DRIVER_ENTRY_SYMBOL));
  if (entry == nullptr || (d.t = entry()) == nullptr) {
    d.skip = path + " has no " PSB_DRIVER_ENTRY_SYMBOL;
    return d;
  }
  d.transport = d.t->caps.transports ? d.t->caps.transports[0] : "";
  // PSBENCH_TRANSPORT_<NAME>: the suite on another transport of the driver (one whose
  // service tests/test_conformance_services.py starts); its first by default.
  std::string transport_var = "PSBENCH_TRANSPORT_" + name;
  for (char &c : transport_var) c = char(std::toupper(uint8_t(c)));
  if (const char *chosen = std::getenv(transport_var.c_str())) {
    bool offered = false;
    for (const char *const *t = d.t->caps.transports; t != nullptr && *t != nullptr; ++t)
      offered = offered || std::string(*t) == chosen;
    if (!offered) {
      d.skip = transport_var + "=" + chosen + ": not a transport of this driver";
      return d;
    }
    d.transport = chosen;
  }
  const std::string &transport = d.transport;
  const std::string manifest =
      std::string(PSBENCH_SOURCE_DIR) + "/drivers/" + name + "/manifest.toml";
  for (const psb_conformance::ManifestService &svc : psb_conformance::manifest_services(manifest)) {
    if (!svc.transport.empty() && svc.transport != transport) continue;  // another transport's
    if (svc.broker) {
      d.brokered = true;
      std::string var = "PSBENCH_BROKER_" + name;
      for (char &c : var) c = char(std::toupper(uint8_t(c)));
      if (const char *addr = std::getenv(var.c_str())) {
        d.option = {"broker", addr};
      } else {
        d.skip = "needs a running " + svc.name + ": set " + var + "=host:port of one";
      }
    } else if (!process_running(svc.name)) {
      d.skip = "needs " + svc.name + " running (start it as its manifest says)";
    }
  }
  return d;
}

const std::vector<Dut> &duts() {
  static const std::vector<Dut> all = [] {
    std::vector<Dut> v;
    for (const std::string &n : split(PSBENCH_DRIVERS, ',')) v.push_back(load(n));
    return v;
  }();
  return all;
}

std::vector<std::string> names() { return split(PSBENCH_DRIVERS, ','); }

// ---- configuration ---------------------------------------------------------------------

struct Cfg {
  psb_config c{};
  std::string run_id;
  std::vector<psb_option> options;
  Cfg(const Dut &d, uint32_t notify, uint64_t max_payload, bool loan = false) {
    static std::atomic<int> counter{0};
    run_id = "conf" + std::to_string(getpid()) + "x" + std::to_string(counter++);
    const psb_capabilities &k = d.t->caps;
    for (size_t i = 0; i + 1 < d.option.size(); i += 2)
      options.push_back({d.option[i].c_str(), d.option[i + 1].c_str()});
    c.run_id = run_id.c_str();
    c.transport = d.transport.c_str();
    c.notify = notify;
    c.qos.reliability = (k.reliability & PSB_RELIABLE) ? PSB_RELIABLE : PSB_BEST_EFFORT;
    c.qos.durability = (k.durability & PSB_VOLATILE) ? PSB_VOLATILE : PSB_TRANSIENT_LOCAL;
    // Reliable: keep_all where offered, so that no sample is replaced before it is
    // taken. Otherwise unset (always valid: the driver's default).
    if (c.qos.reliability == PSB_RELIABLE && (k.history & PSB_KEEP_ALL))
      c.qos.history = PSB_KEEP_ALL;
    c.max_payload = max_payload;
    c.options = options.data();
    c.option_count = options.size();
    c.use_loan = loan ? 1 : 0;
    c.intra_process = 1;
  }
  bool reliable() const { return c.qos.reliability == PSB_RELIABLE; }
};

uint32_t default_notify(const Dut &d) {
  const uint32_t n = d.t->caps.notify;
  return (n & PSB_NOTIFY_WAIT)   ? PSB_NOTIFY_WAIT
         : (n & PSB_NOTIFY_POLL) ? PSB_NOTIFY_POLL
                                 : PSB_NOTIFY_LISTENER;
}

uint64_t largest(const Dut &d) { return std::min<uint64_t>(d.t->caps.max_payload, kSizeCap); }

// ---- samples: [seq u32][size u32][pattern of seq] ---------------------------------------

void fill(uint8_t *p, size_t size, uint32_t seq) {
  for (size_t i = 0; i < size; ++i) p[i] = uint8_t(seq * 131 + i * 7);
  if (size >= 8) {
    std::memcpy(p, &seq, 4);
    const uint32_t s = uint32_t(size);
    std::memcpy(p + 4, &s, 4);
  }
}

constexpr int64_t kNoSeq = -2;  // intact, but too short to carry a sequence number

// The sample's sequence number (kNoSeq under 8 bytes), or -1 when it is not one fill()
// wrote with this size.
int64_t verify(const void *data, size_t len, size_t size) {
  if (len != size) return -1;
  if (size < 8) return kNoSeq;
  uint32_t seq;
  std::memcpy(&seq, data, 4);
  std::vector<uint8_t> want(size);
  fill(want.data(), size, seq);
  return std::memcmp(want.data(), data, size) == 0 ? int64_t(seq) : -1;
}

struct Received {
  std::mutex mu;
  std::vector<int64_t> seqs;  // -1: corrupted
  Clock::time_point last = Clock::now();
  size_t size = 0;
  void add(const void *data, size_t len) {
    const int64_t s = verify(data, len, size);
    std::lock_guard lock(mu);
    seqs.push_back(s);
    last = Clock::now();
  }
  static void on_data(void *user, const void *data, size_t len) {
    static_cast<Received *>(user)->add(data, len);
  }
  size_t count() {
    std::lock_guard lock(mu);
    return seqs.size();
  }
};

// ---- one writer and one reader, each in its own context --------------------------------

struct Pair {
  const psb_driver &t;
  psb_context *wctx = nullptr, *rctx = nullptr;
  psb_writer *w = nullptr;
  psb_reader *r = nullptr;
  Received got;
  psb_error err{};

  Pair(const Dut &d, const Cfg &cfg, size_t size) : t(*d.t) {
    got.size = size;
    const std::string topic = "psb_" + cfg.run_id + "_conf";
    rctx = t.open(&cfg.c, &err);
    if (rctx == nullptr) return;
    const bool listener = cfg.c.notify == PSB_NOTIFY_LISTENER;
    r = t.create_reader(rctx, topic.c_str(), listener ? &Received::on_data : nullptr,
                        listener ? &got : nullptr, &err);
    if (r == nullptr) return;
    wctx = t.open(&cfg.c, &err);
    if (wctx == nullptr) return;
    w = t.create_writer(wctx, topic.c_str(), &err);
  }
  ~Pair() {
    if (w) t.destroy_writer(w);
    if (r) t.destroy_reader(r);
    if (wctx) t.close(wctx);
    if (rctx) t.close(rctx);
  }
  bool ok() const { return w != nullptr; }

  // true when both sides say they are matched, or either cannot tell (then a pause).
  bool wait_matched() {
    auto says = [](auto fn, auto *e) { return fn == nullptr ? -1 : fn(e); };
    if (says(t.matched_readers, w) < 0 || says(t.matched_writers, r) < 0) {
      std::this_thread::sleep_for(500ms);
      return true;
    }
    for (auto end = Clock::now() + 15s; Clock::now() < end; std::this_thread::sleep_for(10ms))
      if (says(t.matched_readers, w) >= 1 && says(t.matched_writers, r) >= 1) return true;
    return false;
  }
};

// Writes kSamples of `size` bytes and receives them; fails the test on any violation.
// may_refuse: the driver may refuse the size on the first write instead (a message
// under its header), with a message starting "<name>: ".
void exchange(const Dut &d, uint32_t notify, size_t size, bool loan = false, int samples = kSamples,
              bool may_refuse = false) {
  SCOPED_TRACE(d.name + ", " + std::to_string(size) + " bytes, notify " + std::to_string(notify) +
               (loan ? ", loaned" : ""));
  Cfg cfg(d, notify, std::max<uint64_t>(size, 32), loan);
  Pair p(d, cfg, size);
  ASSERT_TRUE(p.ok()) << p.err.message;
  ASSERT_TRUE(p.wait_matched()) << "writer and reader not matched within 15 s";

  std::atomic<bool> writes_done{false}, write_failed{false};
  Clock::time_point done_at{};
  const auto start = Clock::now();
  auto finished = [&] {
    if (p.got.count() >= size_t(samples)) return true;
    if (Clock::now() - start > 60s || write_failed) return true;
    if (cfg.reliable() || !writes_done) return false;
    std::lock_guard lock(p.got.mu);
    return Clock::now() - std::max(p.got.last, done_at) > 1s;
  };
  std::string take_error;
  std::thread reader;
  if (notify != PSB_NOTIFY_LISTENER)
    reader = std::thread([&] {
      psb_error err{};
      while (!finished()) {
        const void *data;
        size_t len;
        const int rc =
            p.t.take(p.r, notify == PSB_NOTIFY_WAIT ? 100'000'000 : 0, &data, &len, &err);
        if (rc < 0) {
          take_error = err.message;
          return;
        }
        if (rc == 1) p.got.add(data, len);
        if (rc == 1 && p.t.release) p.t.release(p.r);
      }
    });
  std::vector<uint8_t> buf(size);
  std::string write_error;
  for (int i = 0; i < samples && write_error.empty(); ++i) {
    psb_error err{};
    int rc;
    if (loan) {
      void *s = p.t.loan(p.w, size, &err);
      rc = s == nullptr ? -1
                        : (fill(static_cast<uint8_t *>(s), size, uint32_t(i)),
                           p.t.write_loan(p.w, s, size, &err));
    } else {
      fill(buf.data(), size, uint32_t(i));
      rc = p.t.write(p.w, buf.data(), size, &err);
    }
    if (rc == 0 && p.t.flush) rc = p.t.flush(p.w, &err);
    if (rc != 0) {
      write_error = err.message;
      write_failed = true;
      if (i == 0 && may_refuse) {
        if (reader.joinable()) reader.join();
        std::printf("[  refused ] %s: %zu bytes: %s\n", d.name.c_str(), size, err.message);
        EXPECT_EQ(write_error.rfind(d.name + ": ", 0), 0u)
            << "a refusal must start with \"" << d.name << ": \"";
        return;
      }
    }
    if (!cfg.reliable()) std::this_thread::sleep_for(1ms);  // best effort: do not flood
  }
  if (write_error.empty() && p.t.drain && p.t.drain(p.w, 10'000'000'000, &p.err) < 0)
    write_error = p.err.message;
  {
    std::lock_guard lock(p.got.mu);
    done_at = Clock::now();
  }
  writes_done = true;
  if (reader.joinable()) reader.join();
  while (!finished()) std::this_thread::sleep_for(10ms);  // listener
  EXPECT_EQ(write_error, "");
  EXPECT_EQ(take_error, "");

  std::lock_guard lock(p.got.mu);
  const std::vector<int64_t> &s = p.got.seqs;
  std::printf("[ delivered] %s: %zu of %d samples of %zu bytes (%s, notify %s%s)\n", d.name.c_str(),
              s.size(), samples, size, cfg.reliable() ? "reliable" : "best effort",
              notify == PSB_NOTIFY_WAIT   ? "wait"
              : notify == PSB_NOTIFY_POLL ? "poll"
                                          : "listener",
              loan ? ", loaned" : "");
  EXPECT_GE(s.size(), 1u) << "nothing delivered";
  int corrupted = 0, disorder = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    corrupted += s[i] == -1;
    disorder += i > 0 && s[i] >= 0 && s[i] <= s[i - 1];
  }
  EXPECT_EQ(corrupted, 0) << "samples not intact (wrong length or bytes)";
  EXPECT_EQ(disorder, 0) << "samples out of order or repeated";
  if (cfg.reliable()) {
    EXPECT_EQ(s.size(), size_t(samples)) << "reliable, yet samples lost";
  }
}

// ---- check() ---------------------------------------------------------------------------

using Refused = std::vector<std::pair<std::string, std::string>>;  // setting, message

Refused refusals(const Dut &d, const Cfg &cfg, int *count = nullptr) {
  Refused got;
  const int n = d.t->check(
      &cfg.c,
      [](void *user, const char *setting, const char *reason) {
        static_cast<Refused *>(user)->emplace_back(setting ? setting : "(null)",
                                                   reason ? reason : "(null)");
      },
      &got);
  if (count) *count = n;
  return got;
}

// Whether a refusal's setting is `setting`, or starts with it when it ends in ':'.
bool refused(const Refused &got, const std::string &setting) {
  for (const auto &[s, m] : got)
    if (setting.back() == ':' ? s.rfind(setting, 0) == 0 : s == setting) return true;
  return false;
}

std::string listed(const Refused &got) {
  std::string out;
  for (const auto &[s, m] : got) out += "\n  " + s + ": " + m;
  return got.empty() ? " (none)" : out;
}

void expect_named(const Dut &d, const Refused &got) {
  for (const auto &[s, m] : got)
    EXPECT_EQ(m.rfind(d.name + ": ", 0), 0u)
        << "a refusal must start with \"" << d.name << ": \", is \"" << m << "\"";
}

// ---- the suite -------------------------------------------------------------------------

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const Dut &x : duts())
      if (x.name == GetParam()) d = &x;
    ASSERT_NE(d, nullptr);
    if (d->t == nullptr) GTEST_SKIP() << d->name << ": " << d->skip;
  }
  // Tests that open a context call it first: skipped when the driver's service is missing.
  bool lacks_service() const { return !d->skip.empty(); }
  const Dut *d = nullptr;
};
#define NEEDS_SERVICE() \
  if (lacks_service()) GTEST_SKIP() << d->name << ": " << d->skip

TEST_P(Conformance, DescribesItself) {
  const psb_driver &t = *d->t;
  EXPECT_EQ(t.abi_version, PSB_ABI_VERSION);
  ASSERT_NE(t.name, nullptr);
  EXPECT_EQ(std::string(t.name), d->name) << "name must be the folder name";
  ASSERT_NE(t.description, nullptr);
  EXPECT_STRNE(t.description, "");
  ASSERT_NE(t.version, nullptr);
  ASSERT_NE(t.version(), nullptr);
  EXPECT_STRNE(t.version(), "");
  for (auto fn : {(void *)t.check, (void *)t.open, (void *)t.close, (void *)t.create_writer,
                  (void *)t.destroy_writer, (void *)t.create_reader, (void *)t.destroy_reader,
                  (void *)t.write, (void *)t.take})
    EXPECT_NE(fn, nullptr) << "a required function is missing";
  EXPECT_EQ(t.loan != nullptr, t.write_loan != nullptr)
      << "loan() and write_loan() both or neither";
  ASSERT_NE(t.caps.transports, nullptr);
  EXPECT_NE(t.caps.transports[0], nullptr) << "at least one transport";
  EXPECT_NE(t.caps.reliability & (PSB_BEST_EFFORT | PSB_RELIABLE), 0u);
  EXPECT_NE(t.caps.durability & (PSB_VOLATILE | PSB_TRANSIENT_LOCAL), 0u);
  EXPECT_NE(t.caps.notify & (PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL), 0u);
  EXPECT_GT(t.caps.max_payload, 0u);
}

TEST_P(Conformance, OpensAndCloses) {
  NEEDS_SERVICE();
  Cfg cfg(*d, default_notify(*d), 1024);
  EXPECT_EQ(refusals(*d, cfg), Refused{});
  psb_error err{};
  psb_context *ctx = d->t->open(&cfg.c, &err);
  ASSERT_NE(ctx, nullptr) << err.message;
  d->t->close(ctx);
}

TEST_P(Conformance, MatchesAWriterAndAReader) {
  NEEDS_SERVICE();
  Cfg cfg(*d, default_notify(*d), 1024);
  Pair p(*d, cfg, 1024);
  ASSERT_TRUE(p.ok()) << p.err.message;
  EXPECT_TRUE(p.wait_matched());
}

TEST_P(Conformance, DeliversSamplesIntactAndInOrder) {
  NEEDS_SERVICE();
  std::vector<size_t> sizes{32, 1024};
  if (largest(*d) > 1024) sizes.push_back(largest(*d));
  for (size_t size : sizes) exchange(*d, default_notify(*d), size);
}

// Or refuses them at write(), saying why (a driver whose type carries a header).
TEST_P(Conformance, DeliversOrRefusesEmptyAndOneByteSamples) {
  NEEDS_SERVICE();
  for (size_t size : {size_t(0), size_t(1)})
    exchange(*d, default_notify(*d), size, false, kSamples, true);
}

TEST_P(Conformance, DeliversInEveryNotifyMode) {
  NEEDS_SERVICE();
  for (uint32_t mode : {PSB_NOTIFY_LISTENER, PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL})
    if (d->t->caps.notify & mode) exchange(*d, mode, 1024);
}

TEST_P(Conformance, DeliversLoanedSamples) {
  NEEDS_SERVICE();
  if (!d->t->loan) GTEST_SKIP() << d->name << " has no loan()";
  for (size_t size : {size_t(32), size_t(1024)}) exchange(*d, default_notify(*d), size, true);
}

// driver.h: write_loan takes only the last loan's sample, once, no longer than loaned;
// anything else is an error naming the driver, and the writer goes on working.
TEST_P(Conformance, WriteLoanRefusesASampleItDidNotLoan) {
  NEEDS_SERVICE();
  if (!d->t->loan) GTEST_SKIP() << d->name << " has no loan()";
  Cfg cfg(*d, default_notify(*d), 1024, true);
  Pair p(*d, cfg, 64);
  ASSERT_TRUE(p.ok()) << p.err.message;
  const psb_driver &t = p.t;
  auto refused = [&](void *sample, size_t len, const char *what) {
    psb_error err{};
    EXPECT_EQ(t.write_loan(p.w, sample, len, &err), -1) << what;
    EXPECT_EQ(std::string(err.message).rfind(d->name + ": ", 0), 0u) << what << ": " << err.message;
  };
  uint8_t foreign[64] = {};
  refused(foreign, 64, "a buffer loan() did not return");
  psb_error err{};
  void *s = t.loan(p.w, 64, &err);
  ASSERT_NE(s, nullptr) << err.message;
  fill(static_cast<uint8_t *>(s), 64, 0);
  ASSERT_EQ(t.write_loan(p.w, s, 64, &err), 0) << err.message;
  refused(s, 64, "a sample written already");
  s = t.loan(p.w, 32, &err);
  ASSERT_NE(s, nullptr) << err.message;
  refused(s, 64, "more bytes than loaned");
  s = t.loan(p.w, 64, &err);
  ASSERT_NE(s, nullptr) << err.message;
  fill(static_cast<uint8_t *>(s), 64, 1);
  EXPECT_EQ(t.write_loan(p.w, s, 64, &err), 0) << "after refusals: " << err.message;
}

// ABI 6: a run across hosts (local_address set) is refused, as setting "hosts", by a
// driver whose capabilities say it stays on one host; open() refuses it too.
TEST_P(Conformance, ADriverOnOneHostRefusesARunAcrossHosts) {
  if (d->t->caps.crosses_hosts) GTEST_SKIP() << d->name << " crosses hosts";
  Cfg cfg(*d, default_notify(*d), 1024);
  const char *const peers[] = {"198.18.0.2", nullptr};
  cfg.c.intra_process = 0;
  cfg.c.local_address = "198.18.0.1";
  cfg.c.peer_addresses = peers;
  const Refused got = refusals(*d, cfg);
  EXPECT_TRUE(refused(got, "hosts")) << listed(got);
  expect_named(*d, got);
  psb_error err{};
  psb_context *ctx = d->t->open(&cfg.c, &err);
  EXPECT_EQ(ctx, nullptr) << "open() accepted a run across hosts";
  if (ctx != nullptr) d->t->close(ctx);
}

// A driver that crosses hosts refuses, as setting "hosts", a run across hosts on transport
// shm, naming the transports that cross (every other one it has); one whose peers meet
// without a broker, an address that is not dotted IPv4 (addresses go into its sockets and
// vendor XML; a broker's clients use the broker's address alone).
TEST_P(Conformance, AcrossHostsShmAndMalformedAddressesAreRefused) {
  if (!d->t->caps.crosses_hosts) GTEST_SKIP() << d->name << " stays on one host";
  const char *const peers[] = {"198.18.0.2", nullptr};
  auto across = [&](const char *const *to, const char *transport) {
    Cfg cfg(*d, default_notify(*d), 1024);
    cfg.c.intra_process = 0;
    cfg.c.local_address = "198.18.0.1";
    cfg.c.peer_addresses = to;
    if (transport != nullptr) cfg.c.transport = transport;
    return refusals(*d, cfg);
  };
  auto says = [](const Refused &got, const std::string &words) {
    for (const auto &[s, m] : got)
      if (s == "hosts" && m.find(words) != std::string::npos) return true;
    return false;
  };
  for (const char *bad : {"host-b", "198.18.0.2\"/><x"}) {
    if (d->brokered) break;
    const char *const bad_peers[] = {bad, nullptr};
    const Refused got = across(bad_peers, nullptr);
    EXPECT_TRUE(says(got, "local_address and peer_addresses must be IPv4 addresses"))
        << listed(got);
    EXPECT_TRUE(says(got, std::string("('") + bad + "' is not)")) << listed(got);
    expect_named(*d, got);
  }
  std::vector<std::string> others;
  bool shm = false;
  for (const char *const *t = d->t->caps.transports; t != nullptr && *t != nullptr; ++t)
    std::string(*t) == "shm" ? void(shm = true) : others.push_back(*t);
  if (!shm) return;
  std::string cross;
  for (size_t i = 0; i < others.size(); ++i)
    cross += (i == 0 ? "" : i + 1 == others.size() ? " or " : ", ") + others[i];
  const Refused got = across(peers, "shm");
  EXPECT_TRUE(
      says(got, "transport shm does not cross hosts; across hosts use --transport " + cross))
      << listed(got);
  expect_named(*d, got);
}

TEST_P(Conformance, CheckRefusesQosOutsideItsCapabilities) {
  const psb_capabilities &k = d->t->caps;
  int tried = 0;
  auto refuse = [&](const char *setting, const char *what, auto set) {
    Cfg cfg(*d, default_notify(*d), 1024);
    set(cfg.c.qos);
    ++tried;
    const Refused got = refusals(*d, cfg);
    EXPECT_TRUE(refused(got, setting)) << what << " is outside caps, yet check() does not refuse "
                                       << setting << ":" << listed(got);
    expect_named(*d, got);
  };
  for (uint32_t bit : {PSB_BEST_EFFORT, PSB_RELIABLE})
    if (!(k.reliability & bit))
      refuse("reliability", "reliability", [&](psb_qos &q) { q.reliability = bit; });
  for (uint32_t bit : {PSB_VOLATILE, PSB_TRANSIENT_LOCAL})
    if (!(k.durability & bit))
      refuse("durability", "durability", [&](psb_qos &q) { q.durability = bit; });
  for (uint32_t bit : {PSB_KEEP_LAST, PSB_KEEP_ALL})
    if (!(k.history & bit))
      refuse("history", bit == PSB_KEEP_LAST ? "history keep_last" : "history keep_all",
             [&](psb_qos &q) {
               q.history = bit;
               q.history_depth = bit == PSB_KEEP_LAST ? 1 : 0;
             });
  if (tried == 0) GTEST_SKIP() << d->name << " offers every QoS bit";
}

// Independent problems are each reported, not just the first: an impossible QoS
// (keep_last with a depth of 0, which no driver can keep) together with a value no option
// takes for every option key, or, for a driver without options, every QoS family its
// capability sets leave out.
TEST_P(Conformance, CheckReportsEveryRefusal) {
  const psb_capabilities &k = d->t->caps;
  Cfg cfg(*d, default_notify(*d), 1024);
  cfg.c.qos.history = PSB_KEEP_LAST;
  cfg.c.qos.history_depth = 0;
  std::vector<std::string> want{"history"};
  std::vector<psb_option> junk;
  for (const char *const *key = k.option_keys; key != nullptr && *key != nullptr; ++key)
    junk.push_back({*key, "%not-a-value%"});
  if (!junk.empty()) {
    cfg.c.options = junk.data();
    cfg.c.option_count = junk.size();
    want.push_back("option:");
  }
  if (!(k.reliability & PSB_RELIABLE)) {
    cfg.c.qos.reliability = PSB_RELIABLE;
    want.push_back("reliability");
  }
  if (!(k.durability & PSB_TRANSIENT_LOCAL)) {
    cfg.c.qos.durability = PSB_TRANSIENT_LOCAL;
    want.push_back("durability");
  }
  if (want.size() < 2) GTEST_SKIP() << d->name << ": no two independent problems to give it";
  int count = -1;
  const Refused got = refusals(*d, cfg, &count);
  for (const std::string &setting : want)
    EXPECT_TRUE(refused(got, setting)) << "no refusal of " << setting << ":" << listed(got);
  EXPECT_EQ(count, int(got.size())) << "check() returns the number of refusals it reported";
  expect_named(*d, got);
}

// ---- teardown: nothing left behind -----------------------------------------------------

size_t entries(const char *dir, std::set<std::string> *names = nullptr) {
  size_t n = 0;
  if (DIR *dd = opendir(dir)) {
    for (dirent *e; (e = readdir(dd)) != nullptr;)
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        ++n;
        if (names) names->insert(e->d_name);
      }
    closedir(dd);
  }
  return n;
}

// A socket's protocol and ports from /proc/self/net ("tcp 40112->12345"), for a socket
// inode; empty when no table has it (a unix or netlink socket).
std::string socket_ports(const std::string &inode) {
  auto port = [](const std::string &address) {  // "0100007F:3039": the port in hex
    const size_t colon = address.rfind(':');
    return colon == std::string::npos
               ? address
               : std::to_string(std::stoul(address.substr(colon + 1), nullptr, 16));
  };
  for (const char *protocol : {"tcp", "tcp6", "udp", "udp6"}) {
    std::ifstream table(std::string("/proc/self/net/") + protocol);
    std::string line;
    std::getline(table, line);  // the header
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, node;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> node;
      if (node == inode) return std::string(protocol) + " " + port(local) + "->" + port(remote);
    }
  }
  return "";
}

// This process's open descriptors and what each names ("socket:[1234] tcp 40112->12345",
// a path): a descriptor left open after close is reported with its target, not counted only.
std::map<std::string, std::string> descriptors() {
  std::map<std::string, std::string> open;
  std::set<std::string> numbers;
  entries("/proc/self/fd", &numbers);
  for (const std::string &fd : numbers) {
    char target[512];
    const ssize_t n = readlink(("/proc/self/fd/" + fd).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;  // the listing's own descriptor, closed by now
    std::string name(target, n);
    if (name.rfind("socket:[", 0) == 0)
      if (const std::string ports = socket_ports(name.substr(8, name.size() - 9)); !ports.empty())
        name += " " + ports;
    open[fd] = name;
  }
  return open;
}

// The descriptors in `now` that `before` did not have, one "FD -> TARGET" line each.
std::string opened_since(const std::map<std::string, std::string> &before,
                         const std::map<std::string, std::string> &now) {
  std::string opened;
  for (const auto &[fd, target] : now) {
    const auto was = before.find(fd);
    if (was == before.end() || was->second != target) opened += "\n  " + fd + " -> " + target;
  }
  return opened;
}

// The /dev/shm names another running process maps or holds open: a per-host daemon's
// segments (RouDi), another test's run in flight. Such a file is not this driver's leftover.
std::set<std::string> held_by_others() {
  std::set<std::string> held;
  const std::string self = std::to_string(getpid()), prefix = "/dev/shm/";
  DIR *proc = opendir("/proc");
  if (!proc) return held;
  for (dirent *e; (e = readdir(proc)) != nullptr;) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9' || self == e->d_name) continue;
    const std::string dir = std::string("/proc/") + e->d_name;
    std::ifstream maps(dir + "/maps");
    for (std::string line; std::getline(maps, line);)
      if (const size_t at = line.find(prefix); at != std::string::npos)
        held.insert(line.substr(at + prefix.size(), line.find(' ', at) - at - prefix.size()));
    if (DIR *fds = opendir((dir + "/fd").c_str())) {
      for (dirent *f; (f = readdir(fds)) != nullptr;) {
        char target[512];
        const ssize_t n = readlink((dir + "/fd/" + f->d_name).c_str(), target, sizeof target - 1);
        if (n > 0 && std::string(target, n).rfind(prefix, 0) == 0)
          held.insert(std::string(target + prefix.size(), n - prefix.size()));
      }
      closedir(fds);
    }
  }
  closedir(proc);
  return held;
}

TEST_P(Conformance, LeavesNoThreadFileOrSegmentBehind) {
  NEEDS_SERVICE();
  // Warm-up: the middleware's process-wide threads and files, which may outlive a context.
  exchange(*d, default_notify(*d), 32, false, 10);
  if (HasFatalFailure()) return;
  std::this_thread::sleep_for(200ms);
  std::set<std::string> shm_before;
  const size_t threads = entries("/proc/self/task"), fds = entries("/proc/self/fd");
  const auto fds_before = descriptors();
  entries("/dev/shm", &shm_before);
  for (uint32_t mode : {PSB_NOTIFY_LISTENER, PSB_NOTIFY_WAIT, PSB_NOTIFY_POLL})
    if (d->t->caps.notify & mode) exchange(*d, mode, 32, false, 10);
  size_t threads_now = 0, fds_now = 0;
  std::set<std::string> left;
  // Up to 12 s: a tokio runtime (zenoh) keeps an idle blocking thread for 10 s after the
  // short tasks a link's opening or closing starts; it costs time only while one lingers.
  for (auto end = Clock::now() + 12s; Clock::now() < end; std::this_thread::sleep_for(50ms)) {
    threads_now = entries("/proc/self/task");
    fds_now = entries("/proc/self/fd");
    std::set<std::string> shm_now;
    entries("/dev/shm", &shm_now);
    left.clear();
    for (const std::string &s : shm_now)
      if (!shm_before.count(s)) left.insert(s);
    if (!left.empty())  // what another process uses is not this driver's
      for (const std::string &name : held_by_others()) left.erase(name);
    if (threads_now <= threads && fds_now <= fds && left.empty()) break;
  }
  EXPECT_LE(threads_now, threads) << "threads left running after close";
  EXPECT_LE(fds_now, fds) << "file descriptors left open after close:"
                          << opened_since(fds_before, descriptors());
  std::string names;
  for (const std::string &s : left) names += " " + s;
  EXPECT_TRUE(left.empty()) << "left in /dev/shm:" << names;
}

INSTANTIATE_TEST_SUITE_P(Drivers, Conformance, ::testing::ValuesIn(names()),
                         [](const auto &info) { return info.param; });

}  // namespace
