// psbench/sdk.hpp: in-test drivers turned into ABI tables, one with every optional
// member (and calls that throw on request), one with none, one that logs what close()
// destroys; Refusals and Options, FNV-1a and ids.
#include "psbench/sdk.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using psb::sdk::Options;
using psb::sdk::Refusals;

// The test drivers' capabilities: reliable, volatile, wait, the one transport "mem",
// messages up to max_payload bytes (header included).
constexpr const char *kMemOnly[] = {"mem", nullptr};
constexpr psb_capabilities mem_caps(uint64_t max_payload) {
  return {.reliability = PSB_RELIABLE,
          .durability = PSB_VOLATILE,
          .history = 0,
          .notify = PSB_NOTIFY_WAIT,
          .transports = kMemOnly,
          .option_keys = nullptr,
          .max_payload = max_payload,
          .readers_per_topic = 0,
          .writers_per_topic = 0,
          .crosses_hosts = 0};
}

// ---- a driver with every optional member; a topic or a payload says what to throw ------

struct Full {
  static constexpr const char *name = "sdkt";
  static constexpr const char *description = "the SDK's test driver";
  static const char *version() { return "sdkt 1.0"; }
  static psb_capabilities capabilities() { return mem_caps(1024); }
  // Refuses another transport and a malformed option "depth", each on its own; option
  // "check" throws what it says after those.
  static void check(const psb_config &cfg, Refusals &refuse) {
    if (std::strcmp(cfg.transport, "mem") != 0)
      refuse.add("transport", "transport '%s' is not supported; use mem", cfg.transport);
    const Options options(cfg, refuse);
    options.number("depth", 1, 1, 10);
    if (const char *v = options.find("check")) act(v);
  }

  // Throws what its name says.
  static void act(const char *what) {
    if (std::strcmp(what, "error") == 0) throw psb::sdk::Error("refused on purpose");
    if (std::strcmp(what, "runtime") == 0) throw std::runtime_error("a std::runtime_error");
    if (std::strcmp(what, "bad_alloc") == 0) throw std::bad_alloc();
    if (std::strcmp(what, "int") == 0) throw 42;
  }

  class Context {
   public:
    explicit Context(const psb_config &cfg) {
      Refusals refused;
      if (const char *v = Options(cfg, refused).find("open")) act(v);
    }
  };

  class Writer {
   public:
    Writer(Context &, const char *topic) { act(topic); }
    void write(const void *data, size_t len) {
      if (len > 0 && static_cast<const char *>(data)[0] == 'x')
        psb::sdk::fail("write of %zu bytes failed", len);
      ++writes;
    }
    void *loan(size_t len) {
      if (len > sizeof buffer) psb::sdk::fail("cannot loan %zu bytes", len);
      return buffer;
    }
    void write_loan(void *sample, size_t) {
      if (sample != buffer) throw psb::sdk::Error("not my loan");
    }
    void flush() { throw psb::sdk::Error("flush failed"); }
    bool drain(int64_t timeout_ns) {
      if (timeout_ns == 1) return false;
      if (timeout_ns == 2) throw psb::sdk::Timeout("no ack within 2 ns");
      if (timeout_ns == 3) throw psb::sdk::Error("drain failed");
      return true;
    }
    int matched() const { return 7; }
    void counters(psb::sdk::CounterSink put) { put("writes", writes); }

    uint64_t writes = 0;
    char buffer[16];
  };

  class Reader {
   public:
    // Topic "failing": its listener reports two errors as the reader is built.
    Reader(Context &, const char *topic, psb::sdk::Listener listener) {
      act(topic);
      if (std::strcmp(topic, "failing") == 0) {
        listener.error("lost sample %d", 1);
        listener.error("lost sample %d", 2);
      }
      if (listener) listener("hello", 5);
    }
    bool take(int64_t timeout_ns, const void *&data, size_t &len) {
      if (timeout_ns < 0) throw psb::sdk::Error("take failed");
      if (timeout_ns == 0) return false;
      data = "sample";
      len = 6;
      return true;
    }
    void release() { ++released; }
    int matched() const { return 3; }
    void counters(psb::sdk::CounterSink put) {
      put("sample_lost", 5);
      put("released", released);
    }
    uint64_t released = 0;
  };
};

// ---- a driver with only what is required ------------------------------------------------

struct Minimal {
  static constexpr const char *name = "minimal";
  static constexpr const char *description = "required members only";
  static inline const char *current_version = "0";
  static const char *version() { return current_version; }  // the driver's own: not kept
  static psb_capabilities capabilities() { return mem_caps(0); }
  struct Context {
    explicit Context(const psb_config &) {}
  };
  struct Writer {
    Writer(Context &, const char *) {}
    void write(const void *, size_t) {}
  };
  struct Reader {
    Reader(Context &, const char *, psb::sdk::Listener) {}
    bool take(int64_t, const void *&, size_t &) { return false; }
  };
};

}  // namespace

PSB_SDK_DRIVER(Full)

namespace {

const psb_driver &full() { return *psb_driver_entry(); }

using KV = std::vector<std::pair<std::string, std::string>>;

struct TestRun {
  explicit TestRun(KV kv = {}, const char *transport = "mem") : kv_(std::move(kv)) {
    for (auto &[k, v] : kv_) options_.push_back({k.c_str(), v.c_str()});
    cfg.run_id = "sdktest";
    cfg.transport = transport;
    cfg.notify = PSB_NOTIFY_WAIT;
    cfg.qos = {PSB_RELIABLE, PSB_VOLATILE, 0, 0};
    cfg.options = options_.data();
    cfg.option_count = options_.size();
  }
  KV kv_;
  std::vector<psb_option> options_;
  psb_config cfg{};
};

TEST(Sdk, TableNamesTheDriverAndItsCapabilities) {
  const psb_driver &d = full();
  EXPECT_EQ(d.abi_version, PSB_ABI_VERSION);
  EXPECT_STREQ(d.name, "sdkt");
  EXPECT_STREQ(d.description, "the SDK's test driver");
  EXPECT_STREQ(d.version(), "sdkt 1.0");
  EXPECT_EQ(d.caps.reliability, uint32_t(PSB_RELIABLE));
  EXPECT_EQ(d.caps.max_payload, 1024u);
  EXPECT_STREQ(d.caps.transports[0], "mem");
  EXPECT_EQ(&d, psb_driver_entry()) << "one static table";
}

TEST(Sdk, EveryOptionalMemberPresentIsInTheTable) {
  const psb_driver &d = full();
  for (auto *fn : {(void *)d.check, (void *)d.matched_readers, (void *)d.matched_writers,
                   (void *)d.loan, (void *)d.write_loan, (void *)d.release, (void *)d.flush,
                   (void *)d.drain, (void *)d.writer_counters, (void *)d.reader_counters})
    EXPECT_NE(fn, nullptr);
}

TEST(Sdk, OptionalMembersAbsentAreNull) {
  const psb_driver &d = *psb::sdk::driver_table<Minimal>();
  EXPECT_STREQ(d.name, "minimal");
  EXPECT_EQ(d.matched_readers, nullptr);
  EXPECT_EQ(d.matched_writers, nullptr);
  EXPECT_EQ(d.loan, nullptr);
  EXPECT_EQ(d.write_loan, nullptr);
  EXPECT_EQ(d.release, nullptr);
  EXPECT_EQ(d.flush, nullptr);
  EXPECT_EQ(d.drain, nullptr);
  EXPECT_EQ(d.writer_counters, nullptr);
  // Required ones (and reader_counters, for a listener-mode reader's listener_errors) are there; a
  // driver without check() accepts what its caps hold.
  for (auto *fn : {(void *)d.open, (void *)d.close, (void *)d.create_writer,
                   (void *)d.destroy_writer, (void *)d.create_reader, (void *)d.destroy_reader,
                   (void *)d.write, (void *)d.take, (void *)d.reader_counters})
    EXPECT_NE(fn, nullptr);
  TestRun run;
  psb_error err{};
  EXPECT_EQ(d.check(
                &run.cfg, [](void *, const char *, const char *) { FAIL(); }, nullptr),
            0);
  psb_context *ctx = d.open(&run.cfg, &err);
  ASSERT_NE(ctx, nullptr);
  psb_reader *r = d.create_reader(ctx, "t", nullptr, nullptr, &err);
  const void *data = nullptr;
  size_t len = 0;
  EXPECT_EQ(d.take(r, 0, &data, &len, &err), 0);
  int counters = 0;
  d.reader_counters(
      r, [](void *n, const char *, uint64_t) { ++*static_cast<int *>(n); }, &counters);
  EXPECT_EQ(counters, 0) << "a reader not in listener mode has no listener_errors";
  d.destroy_reader(r);
  d.close(ctx);
}

// ---- a driver whose objects log their destruction ----------------------------------------

std::vector<std::string> destroyed;  // names, in the order their destructors ran

struct Tracked {
  static constexpr const char *name = "tracked";
  static constexpr const char *description = "logs what is destroyed";
  static inline int versions = 0;  // calls of version()
  static std::string version() { return "tracked " + std::to_string(++versions); }
  static constexpr psb_capabilities capabilities = mem_caps(64);  // data, not a function
  struct Context {
    explicit Context(const psb_config &) {}
    ~Context() { destroyed.push_back("context"); }
  };
  struct Writer {
    Writer(Context &, const char *topic) : name(std::string("w:") + topic) {
      if (name == "w:throw") throw psb::sdk::Error("no writer");
    }
    ~Writer() { destroyed.push_back(name); }
    void write(const void *, size_t) {}
    std::string name;
  };
  struct Reader {
    Reader(Context &, const char *topic, psb::sdk::Listener) : name(std::string("r:") + topic) {}
    ~Reader() { destroyed.push_back(name); }
    bool take(int64_t, const void *&, size_t &) { return false; }
    std::string name;
  };
};

TEST(Sdk, CapabilitiesMayBeData) {
  const psb_driver &d = *psb::sdk::driver_table<Tracked>();
  EXPECT_EQ(d.caps.reliability, uint32_t(PSB_RELIABLE));
  EXPECT_STREQ(d.caps.transports[0], "mem");
  EXPECT_EQ(d.caps.max_payload, 64u);
}

// psb::sdk::Capabilities: what the initializer leaves out is every notify mode, or 0.
struct Defaulted : Tracked {
  static constexpr psb::sdk::Capabilities capabilities = {.reliability = PSB_RELIABLE,
                                                          .transports = kMemOnly,
                                                          .max_payload = 64,
                                                          .writers_per_topic = 1};
};

TEST(Sdk, CapabilitiesLeftOutAreEveryNotifyModeOrZero) {
  const psb_capabilities &caps = psb::sdk::driver_table<Defaulted>()->caps;
  EXPECT_EQ(caps.reliability, uint32_t(PSB_RELIABLE));
  EXPECT_EQ(caps.durability, 0u);
  EXPECT_EQ(caps.history, 0u);
  EXPECT_EQ(caps.notify, uint32_t(PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL));
  EXPECT_STREQ(caps.transports[0], "mem");
  EXPECT_EQ(caps.option_keys, nullptr);
  EXPECT_EQ(caps.max_payload, 64u);
  EXPECT_EQ(caps.readers_per_topic, 0u);
  EXPECT_EQ(caps.writers_per_topic, 1u);
  EXPECT_EQ(caps.crosses_hosts, 0u);
}

TEST(Sdk, VersionIsAskedOnceByOpenAtTheLatest) {
  const psb_driver &d = *psb::sdk::driver_table<Tracked>();
  TestRun run;
  psb_error err{};
  d.close(d.open(&run.cfg, &err));
  EXPECT_EQ(Tracked::versions, 1) << "open() asked";
  EXPECT_STREQ(d.version(), "tracked 1");
  EXPECT_STREQ(d.version(), "tracked 1");
  EXPECT_EQ(Tracked::versions, 1) << "kept";
  // A const char * version() is the driver's own, called each time (redis adds its server's).
  const psb_driver &m = *psb::sdk::driver_table<Minimal>();
  EXPECT_STREQ(m.version(), "0");
  Minimal::current_version = "0 (server 7)";
  EXPECT_STREQ(m.version(), "0 (server 7)");
  Minimal::current_version = "0";
}

TEST(Sdk, CloseDestroysTheEndpointsLeftOpenThenTheContext) {
  const psb_driver &d = *psb::sdk::driver_table<Tracked>();
  TestRun run;
  psb_error err{};
  psb_context *ctx = d.open(&run.cfg, &err);
  ASSERT_NE(ctx, nullptr);
  psb_writer *w1 = d.create_writer(ctx, "1", &err);
  psb_writer *w2 = d.create_writer(ctx, "2", &err);
  EXPECT_EQ(d.create_writer(ctx, "throw", &err), nullptr) << "a failed writer is not listed";
  psb_writer *w3 = d.create_writer(ctx, "3", &err);
  psb_reader *r1 = d.create_reader(ctx, "1", nullptr, nullptr, &err);
  psb_reader *r2 = d.create_reader(ctx, "2", nullptr, nullptr, &err);
  ASSERT_TRUE(w1 && w2 && w3 && r1 && r2);
  destroyed.clear();
  d.destroy_writer(w2);  // from the middle of the list
  d.destroy_reader(r2);  // its head
  EXPECT_EQ(destroyed, (std::vector<std::string>{"w:2", "r:2"}));
  destroyed.clear();
  d.close(ctx);
  EXPECT_EQ(destroyed, (std::vector<std::string>{"r:1", "w:3", "w:1", "context"}))
      << "readers, then writers, newest first; the context last";
  (void)w1, (void)w3, (void)r1;

  ctx = d.open(&run.cfg, &err);  // nothing left open: the context only
  destroyed.clear();
  d.destroy_writer(d.create_writer(ctx, "4", &err));
  d.close(ctx);
  EXPECT_EQ(destroyed, (std::vector<std::string>{"w:4", "context"}));
}

using Refused = std::vector<std::pair<std::string, std::string>>;  // setting, message

Refused check(const psb_driver &d, const TestRun &run, int *count = nullptr) {
  Refused got;
  const int n = d.check(
      &run.cfg,
      [](void *user, const char *setting, const char *reason) {
        static_cast<Refused *>(user)->emplace_back(setting, reason);
      },
      &got);
  if (count) *count = n;
  return got;
}

TEST(Sdk, CheckReportsEveryRefusalWithTheDriversName) {
  const psb_driver &d = full();
  int count = -1;
  EXPECT_EQ(check(d, TestRun(), &count), Refused{});
  EXPECT_EQ(count, 0);
  TestRun bad(KV{{"depth", "11"}}, "tcp");
  EXPECT_EQ(
      check(d, bad, &count),
      (Refused{{"transport", "sdkt: transport 'tcp' is not supported; use mem"},
               {"option:depth", "sdkt: option depth='11': use a whole number from 1 to 10"}}));
  EXPECT_EQ(count, 2);
  // A throw from check() is one more refusal, after those recorded before it.
  TestRun throws(KV{{"depth", "0"}, {"check", "runtime"}});
  EXPECT_EQ(check(d, throws, &count),
            (Refused{{"option:depth", "sdkt: option depth='0': use a whole number from 1 to 10"},
                     {"driver", "sdkt: a std::runtime_error"}}));
  EXPECT_EQ(count, 2);
}

TEST(Sdk, ParseOrThrowThrowsEveryRefusal) {
  auto parse = [](const psb_config &cfg, Refusals &refuse) {
    const Options options(cfg, refuse);
    return options.number("a", 1, 1, 9) + options.number("b", 2, 1, 9);
  };
  EXPECT_EQ(psb::sdk::parse_or_throw(TestRun(KV{{"a", "3"}}).cfg, parse), 5);
  try {
    psb::sdk::parse_or_throw(TestRun(KV{{"a", "x"}, {"b", "0"}}).cfg, parse);
    ADD_FAILURE() << "no throw";
  } catch (const psb::sdk::Error &e) {
    EXPECT_STREQ(e.what(),
                 "option a='x': use a whole number from 1 to 9; "
                 "option b='0': use a whole number from 1 to 9");
  }
}

TEST(Sdk, OpenReportsWhatWasThrownWithTheDriversName) {
  const psb_driver &d = full();

  const std::pair<const char *, const char *> cases[] = {
      {"error", "sdkt: refused on purpose"},
      {"runtime", "sdkt: a std::runtime_error"},
      {"bad_alloc", "sdkt: out of memory"},
      {"int", "sdkt: unknown error"},
  };
  for (auto [what, message] : cases) {
    TestRun run(KV{{"open", what}});
    psb_error e{};
    EXPECT_EQ(d.open(&run.cfg, &e), nullptr) << what;
    EXPECT_STREQ(e.message, message);
  }
}

TEST(Sdk, EndpointCallsReportFailuresAndReturnTheFailureValue) {
  const psb_driver &d = full();
  TestRun run;
  psb_error err{};
  psb_context *ctx = d.open(&run.cfg, &err);
  ASSERT_NE(ctx, nullptr) << err.message;

  EXPECT_EQ(d.create_writer(ctx, "error", &err), nullptr);
  EXPECT_STREQ(err.message, "sdkt: refused on purpose");
  EXPECT_EQ(d.create_reader(ctx, "bad_alloc", nullptr, nullptr, &err), nullptr);
  EXPECT_STREQ(err.message, "sdkt: out of memory");

  psb_writer *w = d.create_writer(ctx, "t", &err);
  ASSERT_NE(w, nullptr);
  psb_error ok{};
  EXPECT_EQ(d.write(w, "abc", 3, &ok), 0);
  EXPECT_STREQ(ok.message, "") << "nothing is formatted on success";
  EXPECT_EQ(d.write(w, "xyz", 3, &err), -1);
  EXPECT_STREQ(err.message, "sdkt: write of 3 bytes failed");
  EXPECT_EQ(d.write(w, "xyz", 3, nullptr), -1) << "a NULL psb_error is allowed";

  void *sample = d.loan(w, 8, &err);
  ASSERT_NE(sample, nullptr);
  EXPECT_EQ(d.write_loan(w, sample, 8, &err), 0);
  EXPECT_EQ(d.loan(w, 100, &err), nullptr);
  EXPECT_STREQ(err.message, "sdkt: cannot loan 100 bytes");
  // write_loan takes the last loan's sample, once, no longer than loaned; the driver's
  // write_loan never sees anything else (its "not my loan" is never said).
  const char *foreign =
      "sdkt: write_loan got a sample that loan() did not return (or that "
      "was already written)";
  EXPECT_EQ(d.write_loan(w, &err, 8, &err), -1);
  EXPECT_STREQ(err.message, foreign);
  EXPECT_EQ(d.write_loan(w, sample, 8, &err), -1) << "written twice";
  EXPECT_STREQ(err.message, foreign);
  sample = d.loan(w, 4, &err);
  EXPECT_EQ(d.write_loan(w, sample, 8, &err), -1);
  EXPECT_STREQ(err.message, "sdkt: write_loan of 8 bytes for a sample loaned for 4");
  EXPECT_EQ(d.write_loan(w, sample, 4, &err), -1) << "a refused write_loan ends the loan";
  sample = d.loan(w, 4, &err);
  EXPECT_EQ(d.write_loan(w, sample, 3, &err), 0) << "fewer bytes than loaned";

  EXPECT_EQ(d.flush(w, &err), -1);
  EXPECT_STREQ(err.message, "sdkt: flush failed");
  EXPECT_EQ(d.drain(w, 1000, &err), 1);
  EXPECT_EQ(d.drain(w, 1, &err), 0);
  psb_error timeout{};
  EXPECT_EQ(d.drain(w, 2, &timeout), 0);
  EXPECT_STREQ(timeout.message, "sdkt: no ack within 2 ns");
  EXPECT_EQ(d.drain(w, 3, &err), -1);
  EXPECT_STREQ(err.message, "sdkt: drain failed");
  EXPECT_EQ(d.matched_readers(w), 7);

  std::vector<std::pair<std::string, uint64_t>> got;
  auto put = [](void *user, const char *name, uint64_t value) {
    static_cast<decltype(got) *>(user)->emplace_back(name, value);
  };
  d.writer_counters(w, put, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (std::pair<std::string, uint64_t>{"writes", 1}));

  std::string heard;
  auto on_data = [](void *user, const void *data, size_t len) {
    static_cast<std::string *>(user)->assign(static_cast<const char *>(data), len);
  };
  psb_reader *r = d.create_reader(ctx, "t", on_data, &heard, &err);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(heard, "hello") << "the listener reaches the Reader";
  const void *data = nullptr;
  size_t len = 0;
  EXPECT_EQ(d.take(r, 0, &data, &len, &err), 0);
  EXPECT_EQ(d.take(r, 10, &data, &len, &err), 1);
  EXPECT_EQ(std::string(static_cast<const char *>(data), len), "sample");
  EXPECT_EQ(d.take(r, -1, &data, &len, &err), -1);
  EXPECT_STREQ(err.message, "sdkt: take failed");
  d.release(r);
  EXPECT_EQ(d.matched_writers(r), 3);
  got.clear();
  d.reader_counters(r, put, &got);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (std::pair<std::string, uint64_t>{"sample_lost", 5}));
  EXPECT_EQ(got[1], (std::pair<std::string, uint64_t>{"released", 1}));
  EXPECT_EQ(got[2], (std::pair<std::string, uint64_t>{"listener_errors", 0}));

  // Errors on the delivery thread: counted, the first on stderr with the driver's name.
  testing::internal::CaptureStderr();
  psb_reader *failing = d.create_reader(ctx, "failing", on_data, &heard, &err);
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(said, "sdkt: lost sample 1\n");
  got.clear();
  d.reader_counters(failing, put, &got);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2], (std::pair<std::string, uint64_t>{"listener_errors", 2}));
  d.destroy_reader(failing);

  d.destroy_reader(r);
  d.destroy_writer(w);
  d.close(ctx);
}

// ---- Options ----------------------------------------------------------------------------

// What a lookup recorded: "" when nothing, else "setting: reason" of the one refusal.
template <class F>
std::string refusal_of(F f) {
  Refusals refuse;
  f(refuse);
  if (refuse.empty()) return "";
  EXPECT_EQ(refuse.size(), 1u);
  return refuse.all()[0].setting + ": " + refuse.all()[0].reason;
}

TEST(SdkOptions, TextAndRequired) {
  TestRun run(KV{{"profile", "a.xml"}, {"empty", ""}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_EQ(o.text("profile", "x"), "a.xml");
  EXPECT_EQ(o.text("missing", "x"), "x");
  EXPECT_EQ(o.text("empty", "x"), "");
  EXPECT_TRUE(o.has("empty"));
  EXPECT_FALSE(o.has("missing"));
  EXPECT_EQ(o.find("missing"), nullptr);
  EXPECT_STREQ(o.required("profile"), "a.xml");
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(
      refusal_of([&](Refusals &r) { EXPECT_EQ(Options(run.cfg, r).required("broker"), nullptr); }),
      "option:broker: option broker is missing");
  EXPECT_EQ(refusal_of([&](Refusals &r) {
              Options(run.cfg, r).required("broker", "HOST:PORT", "give your broker's address");
            }),
            "option:broker: option broker=HOST:PORT is missing; give your broker's address");
}

TEST(SdkOptions, FlagTakesTrueFalseOneZeroOnly) {
  TestRun run(KV{{"a", "true"},
                 {"b", "false"},
                 {"c", "1"},
                 {"d", "0"},
                 {"e", "yes"},
                 {"f", ""},
                 {"g", "TRUE"}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_TRUE(o.flag("a", false));
  EXPECT_FALSE(o.flag("b", true));
  EXPECT_TRUE(o.flag("c", false));
  EXPECT_FALSE(o.flag("d", true));
  EXPECT_TRUE(o.flag("missing", true));
  EXPECT_FALSE(o.flag("missing", false));
  EXPECT_TRUE(refuse.empty());
  auto flag = [&](const char *key) {
    return refusal_of(
        [&](Refusals &r) { EXPECT_TRUE(Options(run.cfg, r).flag(key, true)) << "the fallback"; });
  };
  EXPECT_EQ(flag("e"), "option:e: option e='yes': use true or false");
  EXPECT_EQ(flag("f"), "option:f: option f='': use true or false");
  EXPECT_EQ(flag("g"), "option:g: option g='TRUE': use true or false");
}

TEST(SdkOptions, NumberIsAWholeNumberInRange) {
  TestRun run(KV{{"n", "42"},
                 {"neg", "-5"},
                 {"lo", "0"},
                 {"hi", "65536"},
                 {"word", "abc"},
                 {"tail", "12x"},
                 {"space", " 1"},
                 {"plus", "+1"},
                 {"empty", ""},
                 {"huge", "99999999999999999999"}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_EQ(o.number("n", 0, 1, 100), 42);
  EXPECT_EQ(o.number("neg", 0, -10, 10), -5);
  EXPECT_EQ(o.number("missing", 7, 1, 100), 7);
  EXPECT_EQ(o.number("hi", 0, 0, 65536), 65536);
  EXPECT_TRUE(refuse.empty());
  auto number = [&](const char *key, int64_t min, int64_t max) {
    return refusal_of([&](Refusals &r) {
      EXPECT_EQ(Options(run.cfg, r).number(key, 3, min, max), 3) << "the fallback";
    });
  };
  EXPECT_EQ(number("lo", 1, 65535), "option:lo: option lo='0': use a whole number from 1 to 65535");
  EXPECT_EQ(number("hi", 1, 65535),
            "option:hi: option hi='65536': use a whole number from 1 to 65535");
  EXPECT_EQ(number("neg", 0, 9), "option:neg: option neg='-5': use a whole number from 0 to 9");
  for (const char *key : {"word", "tail", "space", "plus", "empty", "huge"})
    EXPECT_EQ(number(key, 0, 100), "option:" + std::string(key) + ": option " + std::string(key) +
                                       "='" + o.find(key) + "': use a whole number from 0 to 100");
}

TEST(SdkOptions, StrictFlagTakesTrueOrFalseOnly) {
  TestRun run(KV{{"a", "true"}, {"b", "false"}, {"c", "1"}, {"d", "0"}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_TRUE(o.flag("a", false, /*strict=*/true));
  EXPECT_FALSE(o.flag("b", true, true));
  EXPECT_FALSE(o.flag("missing", false, true));
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(
      refusal_of([&](Refusals &r) { EXPECT_FALSE(Options(run.cfg, r).flag("c", false, true)); }),
      "option:c: option c='1': use c=true or c=false");
  EXPECT_EQ(
      refusal_of([&](Refusals &r) { EXPECT_TRUE(Options(run.cfg, r).flag("d", true, true)); }),
      "option:d: option d='0': use d=true or d=false");
}

TEST(SdkOptions, NumberWithAHintSaysTheHint) {
  TestRun run(KV{{"hwm", "-1"}, {"ok", "12"}});
  Refusals refuse;
  EXPECT_EQ(Options(run.cfg, refuse).number("ok", 0, 0, 99, "a number of messages"), 12);
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(refusal_of([&](Refusals &r) {
              EXPECT_EQ(
                  Options(run.cfg, r).number("hwm", 5, 0, 99, "a number of messages from 0 to 99"),
                  5);
            }),
            "option:hwm: option hwm='-1': use a number of messages from 0 to 99");
}

TEST(SdkOptions, ChoiceIsTheIndexOfOneOfTheNames) {
  TestRun run(KV{{"type", "complex"}, {"mode", "float"}, {"empty", ""}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_EQ(o.choice("type", {"bytes", "complex"}), 1u);
  EXPECT_EQ(o.choice("missing", {"bytes", "complex"}), 0u);
  EXPECT_EQ(o.choice("missing", {"a", "b", "c"}, 2), 2u);
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(
      refusal_of([&](Refusals &r) {
        EXPECT_EQ(Options(run.cfg, r).choice("mode", {"bytes", "complex"}), 0u);
      }),
      "option:mode: option mode='float' is not known; use mode=bytes (default) or mode=complex");
  EXPECT_EQ(
      refusal_of([&](Refusals &r) {
        EXPECT_EQ(Options(run.cfg, r).choice("empty", {"a", "b", "c"}, 1), 1u);
      }),
      "option:empty: option empty='' is not known; use empty=a, empty=b (default) or empty=c");
}

TEST(SdkOptions, IndexInFindsANameOrSaysMinusOne) {
  EXPECT_EQ(psb::sdk::index_in("tcp", {"tcp", "ipc", "inproc"}), 0);
  EXPECT_EQ(psb::sdk::index_in("inproc", {"tcp", "ipc", "inproc"}), 2);
  EXPECT_EQ(psb::sdk::index_in("udp", {"tcp", "ipc", "inproc"}), -1);
  EXPECT_EQ(psb::sdk::index_in("", {"tcp"}), -1);
  EXPECT_EQ(psb::sdk::index_in(nullptr, {"tcp"}), -1);
  EXPECT_EQ(psb::sdk::index_in("tcp", {}), -1);
  static const char *const names[] = {"udp", "shm", nullptr};
  EXPECT_EQ(psb::sdk::index_in("shm", names), 1);
  EXPECT_EQ(psb::sdk::index_in("tcp", names), -1);
  EXPECT_EQ(psb::sdk::index_in(nullptr, names), -1);
}

TEST(SdkOptions, TransportIndexIsTheFirstForDefaultAndForOneNotListed) {
  static const char *const names[] = {"tcp", "ipc", "inproc", nullptr};
  psb_config cfg{};
  EXPECT_EQ(psb::sdk::transport_index(cfg, names), 0);  // NULL
  const std::pair<const char *, int> known[] = {
      {"default", 0}, {"tcp", 0}, {"inproc", 2}, {"udp", 0}};
  for (auto [transport, index] : known) {
    cfg.transport = transport;
    EXPECT_EQ(psb::sdk::transport_index(cfg, names), index) << transport;
  }
}

TEST(SdkOptions, GivenButRefusesAnOptionGivenWhereItDoesNotApply) {
  TestRun run(KV{{"port_base", "21000"}});
  Refusals refuse;
  const Options o(run.cfg, refuse);
  EXPECT_FALSE(o.given_but("port_base", false, "applies to transport tcp only"));
  EXPECT_FALSE(o.given_but("rcvhwm", true, "does not apply"));  // not given
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(refusal_of([&](Refusals &r) {
              EXPECT_TRUE(Options(run.cfg, r)
                              .given_but("port_base", true,
                                         "applies to transport %s only (this run uses %s)", "tcp",
                                         "ipc"));
            }),
            "option:port_base: option port_base applies to transport tcp only (this run uses "
            "ipc)");
}

// ---- take_waiting and Listener::drain -----------------------------------------------------

// A reader whose try_take() answers from a script: 1 a sample, 0 none, 'b' a BadSample,
// 'e' another error; wait() answers from its own.
struct Scripted {
  std::string tries, waits;
  size_t tried = 0, waited = 0;
  bool try_take(const void *&data, size_t &len) {
    const char c = tried < tries.size() ? tries[tried] : '0';
    ++tried;
    if (c == 'b') psb::sdk::bad_sample("sample %zu is not ours", tried);
    if (c == 'e') psb::sdk::fail("take failed at %zu", tried);
    data = "s";
    len = tried;
    return c == '1';
  }
  bool wait(int64_t) {
    const char c = waited < waits.size() ? waits[waited] : '0';
    ++waited;
    return c == '1';
  }
};

TEST(SdkTakeWaiting, TriesFirstAndNeverWaitsWithTimeoutZero) {
  Scripted r{"1", ""};
  const void *data = nullptr;
  size_t len = 0;
  EXPECT_TRUE(psb::sdk::take_waiting(r, 0, data, len));
  Scripted none{"0", "1"};
  EXPECT_FALSE(psb::sdk::take_waiting(none, 0, data, len));
  EXPECT_EQ(none.tried, 1u);
  EXPECT_EQ(none.waited, 0u);
}

TEST(SdkTakeWaiting, AWakeupWithoutDataWaitsAgain) {
  Scripted r{"001", "11"};  // none, a wakeup with none, a wakeup with one
  const void *data = nullptr;
  size_t len = 0;
  EXPECT_TRUE(psb::sdk::take_waiting(r, -1, data, len));
  EXPECT_EQ(r.tried, 3u);
  EXPECT_EQ(r.waited, 2u);
  EXPECT_EQ(len, 3u);
}

TEST(SdkTakeWaiting, GivesUpOnceTheTimeoutHasPassed) {
  Scripted r{"0", ""};  // wait() never says data came
  const void *data = nullptr;
  size_t len = 0;
  EXPECT_FALSE(psb::sdk::take_waiting(r, 1'000'000, data, len));
  EXPECT_GE(r.waited, 1u);
}

TEST(SdkListenerDrain, ABadSampleIsCountedAndTheNextDelivered) {
  psb::sdk::ListenerErrors errors{"sdkt"};
  std::vector<size_t> got;
  const psb::sdk::Listener listener{[](void *user, const void *, size_t len) {
                                      static_cast<std::vector<size_t> *>(user)->push_back(len);
                                    },
                                    &got, &errors};
  Scripted r{"1b10", ""};
  testing::internal::CaptureStderr();
  listener.drain([&](const void *&d, size_t &n) { return r.try_take(d, n); });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "sdkt: sample 2 is not ours\n");
  EXPECT_EQ(got, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(errors.count.load(), 1u);

  // Another error ends the delivery: what follows waits for the next notification.
  Scripted failing{"1e1", ""};
  got.clear();
  testing::internal::CaptureStderr();
  listener.drain([&](const void *&d, size_t &n) { return failing.try_take(d, n); });
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(got, (std::vector<size_t>{1}));
  EXPECT_EQ(errors.count.load(), 2u);
  EXPECT_EQ(failing.tried, 2u);
}

// ---- ListenerThread -----------------------------------------------------------------------

TEST(SdkListenerThread, WhatTheLoopThrowsIsTheListenersErrorNotTheProcesssEnd) {
  psb::sdk::ListenerErrors errors{"sdkt"};
  const psb::sdk::Listener listener{[](void *, const void *, size_t) {}, nullptr, &errors};
  testing::internal::CaptureStderr();
  {
    psb::sdk::ListenerThread t;
    t.start(listener, [] { psb::sdk::fail("recv: %s", "Bad file descriptor"); });
    t.stop();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "sdkt: recv: Bad file descriptor; the listener stops\n");
  EXPECT_EQ(errors.count.load(), 1u);
}

TEST(SdkListenerThread, RunsTheLoopUntilStopped) {
  std::atomic<int> turns{0};
  psb::sdk::ListenerThread t;
  t.stop();  // nothing started: returns at once
  EXPECT_FALSE(t.stopping()) << "only a started thread is stopped";
  t.start(psb::sdk::Listener{}, [&] {
    while (!t.stopping()) {
      turns.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  while (turns.load() < 3) std::this_thread::yield();
  t.stop();
  const int after = turns.load();
  EXPECT_TRUE(t.stopping());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(turns.load(), after) << "the loop has returned";
  t.stop();  // twice is fine
}

TEST(SdkListenerThread, TheDestructorStopsTheLoop) {
  std::atomic<bool> returned{false};
  {
    psb::sdk::ListenerThread t;
    t.start(psb::sdk::Listener{}, [&] {
      while (!t.stopping()) std::this_thread::yield();
      returned = true;
    });
  }
  EXPECT_TRUE(returned.load());
}

TEST(SdkRefusals, RunIdIsRefusedWhenEmpty) {
  TestRun run;
  Refusals refuse;
  EXPECT_EQ(psb::sdk::run_id(run.cfg, refuse, "it names the topics"), "sdktest");
  EXPECT_TRUE(refuse.empty());
  for (const char *id : {"", static_cast<const char *>(nullptr)}) {
    run.cfg.run_id = id;
    EXPECT_EQ(refusal_of([&](Refusals &r) {
                EXPECT_EQ(psb::sdk::run_id(run.cfg, r, "it names the topics"), "");
              }),
              "driver: the run id is empty; it names the topics");
  }
}

TEST(SdkRefusals, RunTopicsAreKeptInOrderAndIndexed) {
  TestRun run;
  psb::sdk::RunSettings s;
  Refusals refuse;
  s.keep(run.cfg, refuse, "it names the topics");
  EXPECT_TRUE(s.run_topics.empty());
  EXPECT_EQ(s.topic_index("psb_sdktest_a"), -1);  // not listed: derive from the name
  const char *const topics[] = {"psb_sdktest_b", "psb_sdktest_a"};
  run.cfg.run_topics = topics;
  run.cfg.run_topic_count = 2;
  s.keep(run.cfg, refuse, "it names the topics");
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(s.topic_index("psb_sdktest_b"), 0);
  EXPECT_EQ(s.topic_index("psb_sdktest_a"), 1);
  EXPECT_EQ(s.topic_index("psb_sdktest_c"), -1);
  // One topic twice would give two topics one port: refused (the node never sends it).
  const char *const twice[] = {"psb_sdktest_a", "psb_sdktest_a"};
  run.cfg.run_topics = twice;
  EXPECT_EQ(refusal_of([&](Refusals &r) { s.keep(run.cfg, r, "it names the topics"); }),
            "driver: run_topics[1] is listed twice: every topic of the run once, by name");
  EXPECT_TRUE(s.run_topics.empty());
}

TEST(SdkHash, SlotInRangeGivesEveryIndexOfARunItsOwnId) {
  // The run's start, then one after another, wrapping within the range.
  const uint32_t start = psb::sdk::fnv1a32("r1") % 100;
  EXPECT_EQ(psb::sdk::slot_in_range("r1", 0, 20000, 100), 20000 + start);
  EXPECT_EQ(psb::sdk::slot_in_range("r1", 1, 20000, 100), 20000 + (start + 1) % 100);
  std::vector<bool> seen(100);
  for (uint32_t i = 0; i < 100; ++i) {
    const uint32_t id = psb::sdk::slot_in_range("r1", i, 20000, 100);
    ASSERT_GE(id, 20000u);
    ASSERT_LT(id, 20100u);
    EXPECT_FALSE(seen[id - 20000]) << i;
    seen[id - 20000] = true;
  }
}

TEST(SdkTime, MillisecondsAreRoundedUpAndCapped) {
  static_assert(psb::sdk::ms_rounded_up(1) == 1);
  EXPECT_EQ(psb::sdk::ms_rounded_up(0), 0);
  EXPECT_EQ(psb::sdk::ms_rounded_up(-5), 0);
  EXPECT_EQ(psb::sdk::ms_rounded_up(999'999), 1);
  EXPECT_EQ(psb::sdk::ms_rounded_up(1'000'000), 1);
  EXPECT_EQ(psb::sdk::ms_rounded_up(1'000'001), 2);
  EXPECT_EQ(psb::sdk::ms_rounded_up(2'500'000'000), 2500);
  EXPECT_EQ(psb::sdk::ms_rounded_up(int64_t(INT_MAX) * 1'000'000), INT_MAX);
  EXPECT_EQ(psb::sdk::ms_rounded_up(INT64_MAX), INT_MAX);
}

TEST(SdkTime, WaitUntilAsksUntilReadyOrTheTimeoutPassed) {
  int asked = 0;
  EXPECT_TRUE(psb::sdk::wait_until(-1, [&] { return ++asked == 1; }));
  EXPECT_EQ(asked, 1) << "ready at once: asked once";
  asked = 0;
  EXPECT_TRUE(psb::sdk::wait_until(-1, [&] { return ++asked == 2000; }))
      << "past the spin and yield phases";
  EXPECT_EQ(asked, 2000);
  asked = 0;
  EXPECT_FALSE(psb::sdk::wait_until(0, [&] { return ++asked < 0; }));
  EXPECT_EQ(asked, 1) << "timeout 0: asked once";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(psb::sdk::wait_until(5'000'000, [] { return false; }));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(5));
  EXPECT_LT(waited, std::chrono::seconds(2));
}

TEST(SdkRefusals, PayloadInRange) {
  TestRun run;
  Refusals refuse;
  run.cfg.max_payload = 32;
  EXPECT_TRUE(psb::sdk::payload_in_range(run.cfg, refuse, 32, 64));
  run.cfg.max_payload = 64;
  EXPECT_TRUE(psb::sdk::payload_in_range(run.cfg, refuse, 32, 64));
  EXPECT_TRUE(refuse.empty());
  run.cfg.max_payload = 65;
  EXPECT_EQ(refusal_of(
                [&](Refusals &r) { EXPECT_FALSE(psb::sdk::payload_in_range(run.cfg, r, 32, 64)); }),
            "size: max_payload 65 is not supported; supported: 32 to 64 bytes (header included)");
  run.cfg.max_payload = 0;
  EXPECT_EQ(
      refusal_of(
          [&](Refusals &r) { EXPECT_FALSE(psb::sdk::payload_in_range(run.cfg, r, 1, 4194304)); }),
      "size: max_payload 0 is not supported; supported: 1 to 4194304 bytes (header included)");
}

TEST(SdkOptions, RefuseUnknownNamesEveryKeyNotListed) {
  TestRun run(KV{{"slots", "4"}, {"broker", "x"}, {"wakeup", "spin"}, {"depth", "2"}});
  static const char *const keys[] = {"wakeup", "slots", nullptr};
  Refusals refuse;
  Options(run.cfg, refuse).refuse_unknown(keys);
  ASSERT_EQ(refuse.size(), 2u);
  EXPECT_EQ(refuse.all()[0].setting, "option:broker");
  EXPECT_EQ(refuse.all()[0].reason, "unknown option 'broker'; valid options: wakeup, slots");
  EXPECT_EQ(refuse.all()[1].reason, "unknown option 'depth'; valid options: wakeup, slots");
  static const char *const none[] = {nullptr};
  Refusals refuse_all;
  Options(run.cfg, refuse_all).refuse_unknown(none);
  ASSERT_EQ(refuse_all.size(), 4u);
  EXPECT_EQ(refuse_all.all()[0].reason, "unknown option 'slots'; this driver takes no options");
  TestRun quiet;
  Refusals nothing;
  Options(quiet.cfg, nothing).refuse_unknown(none);
  EXPECT_TRUE(nothing.empty());
}

// ---- the environment ------------------------------------------------------------------------

TEST(SdkEnvironment, LibraryFileNamesWhereASymbolIsLoadedFrom) {
  const std::string libc = psb::sdk::library_file(reinterpret_cast<const void *>(&std::fopen), "?");
  EXPECT_EQ(libc.rfind("libc.so", 0), 0u) << libc;
  EXPECT_EQ(libc.find('/'), std::string::npos) << "a file name, not a path";
  // A symbol of this program: the program's own file.
  char self[PATH_MAX] = "";
  ASSERT_NE(realpath("/proc/self/exe", self), nullptr);
  EXPECT_EQ(psb::sdk::library_file(reinterpret_cast<const void *>(&full), "?"),
            std::string(std::strrchr(self, '/') + 1));
  int on_the_stack = 0;
  EXPECT_EQ(psb::sdk::library_file(&on_the_stack, "libnone"), "libnone") << "in no library";
}

TEST(SdkEnvironment, ProcessRunningFindsThisProcessByName) {
  char comm[64] = "";
  FILE *f = std::fopen("/proc/self/comm", "r");
  ASSERT_NE(f, nullptr);
  ASSERT_NE(std::fgets(comm, sizeof comm, f), nullptr);
  std::fclose(f);
  const std::string self(comm, std::strcspn(comm, "\n"));
  EXPECT_TRUE(psb::sdk::process_running(self)) << self;
  EXPECT_FALSE(psb::sdk::process_running(self.substr(0, self.size() - 1))) << "the whole name only";
  EXPECT_FALSE(psb::sdk::process_running("psb-no-such-p"));
  EXPECT_FALSE(psb::sdk::process_running(""));
}

// ---- hashing and ids ---------------------------------------------------------------------

TEST(SdkHash, Fnv1aKnownValues) {
  static_assert(psb::sdk::fnv1a32("") == 2166136261u);
  EXPECT_EQ(psb::sdk::fnv1a32("a"), 0xe40c292cu);
  EXPECT_EQ(psb::sdk::fnv1a32("foobar"), 0xbf9cf968u);
  EXPECT_EQ(psb::sdk::fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(psb::sdk::fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(psb::sdk::fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(psb::sdk::fnv1a64("", 1469598103934665603ull), 1469598103934665603ull)
      << "another basis";
  EXPECT_EQ(psb::sdk::fnv1a64("run", 1469598103934665603ull), 0x639e5b51578e7f84ull);
}

TEST(SdkHash, ShortenedKeepsShortNamesAndHashesLongOnes) {
  EXPECT_EQ(psb::sdk::shortened("run42", 20), "run42");
  EXPECT_EQ(psb::sdk::shortened(std::string(20, 'a'), 20), std::string(20, 'a'));
  // 21 'a': 3 kept, then "_" and FNV-1a-64 of all 21, computed apart in Python:
  // h = 14695981039346656037; for c in b"a" * 21: h = ((h ^ c) * 1099511628211) % 2**64
  EXPECT_EQ(psb::sdk::shortened(std::string(21, 'a'), 20), "aaa_4c37049181f75a98");
  EXPECT_NE(psb::sdk::shortened(std::string(30, 'a') + "x", 20),
            psb::sdk::shortened(std::string(30, 'a') + "y", 20))
      << "names that differ only past the cut stay apart";
}

TEST(SdkHash, IdInRangeIsWhatTheDriversDeriveToday) {
  // cyclonedds default_domain_id() and fastdds: 1 + FNV-1a-32(run id) % 200; udp: a
  // port base + FNV-1a-32(topic) % span. Written out here as they are there.
  auto today = [](const char *s, uint32_t first, uint32_t count) {
    uint32_t h = 2166136261u;
    for (; *s; ++s) h = (h ^ uint8_t(*s)) * 16777619u;
    return first + h % count;
  };
  for (const char *run : {"a", "r1", "20261125T101010abc", "psb_run_data", "\xff\x80"}) {
    EXPECT_EQ(psb::sdk::id_in_range(run, 1, 200), today(run, 1, 200)) << run;
    EXPECT_EQ(psb::sdk::id_in_range(run, 20000, 1000), today(run, 20000, 1000)) << run;
    EXPECT_GE(psb::sdk::id_in_range(run, 1, 200), 1u);
    EXPECT_LE(psb::sdk::id_in_range(run, 1, 200), 200u);
  }
}

// ---- what the capabilities leave out -----------------------------------------------------

Refusals outside(const psb_config &cfg, Refusals found = {}) {
  static const char *const transports[] = {"tcp", "ipc", nullptr};
  const psb_capabilities caps{.reliability = PSB_BEST_EFFORT,
                              .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
                              .history = PSB_KEEP_LAST,
                              .notify = PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
                              .transports = transports,
                              .option_keys = nullptr,
                              .max_payload = 1024,
                              .readers_per_topic = 0,
                              .writers_per_topic = 0,
                              .crosses_hosts = 0};
  psb::sdk::refuse_outside_caps(caps, cfg, found);
  return found;
}

std::vector<std::string> listed(const Refusals &r) {
  std::vector<std::string> out;
  for (const auto &x : r.all()) out.push_back(x.setting + ": " + x.reason);
  return out;
}

TEST(SdkCaps, AcceptsWhatTheCapabilitiesHold) {
  TestRun run({}, "ipc");
  run.cfg.qos = {PSB_BEST_EFFORT, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 4};
  run.cfg.notify = PSB_NOTIFY_POLL;
  EXPECT_TRUE(outside(run.cfg).empty());
  run.cfg.qos.history = 0;  // not set
  run.cfg.qos.history_depth = 0;
  for (const char *t : {(const char *)nullptr, "default"}) {  // both the first transport
    run.cfg.transport = t;
    EXPECT_TRUE(outside(run.cfg).empty()) << (t ? t : "NULL");
  }
}

TEST(SdkCaps, RefusesEachSettingOutsideInTheNodesWords) {
  TestRun run({}, "udp");
  run.cfg.qos = {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0};
  run.cfg.notify = PSB_NOTIFY_LISTENER;
  EXPECT_EQ(listed(outside(run.cfg)),
            (std::vector<std::string>{
                "reliability: reliability 'reliable' is not supported; this driver supports "
                "best_effort",
                "history: history 'keep_all' is not supported; this driver supports keep_last",
                "notify: notify 'listener' is not supported; this driver supports wait|poll",
                "transport: transport 'udp' is not supported; this driver supports tcp|ipc"}));
  // Not one psb_* value: refused too; keep_last with a depth of 0 as well.
  TestRun odd({}, "tcp");
  odd.cfg.qos = {PSB_BEST_EFFORT | PSB_RELIABLE, 0, PSB_KEEP_LAST, 0};
  odd.cfg.notify = PSB_NOTIFY_WAIT;
  EXPECT_EQ(listed(outside(odd.cfg)),
            (std::vector<std::string>{
                "reliability: reliability '3' is not supported; this driver supports best_effort",
                "durability: durability '0' is not supported; this driver supports "
                "volatile|transient_local",
                "history: history keep_last needs a depth of at least 1 (keep_last:N)"}));
}

TEST(SdkCaps, LeavesASettingTheDriverRefusedToItsReason) {
  TestRun run({}, "udp");
  run.cfg.qos = {PSB_RELIABLE, PSB_VOLATILE, 0, 0};
  Refusals mine;
  mine.add("reliability", "reliable needs acknowledgements, which this has not");
  EXPECT_TRUE(mine.has("reliability"));
  EXPECT_FALSE(mine.has("transport"));
  EXPECT_EQ(listed(outside(run.cfg, mine)),
            (std::vector<std::string>{
                "reliability: reliable needs acknowledgements, which this has not",
                "transport: transport 'udp' is not supported; this driver supports tcp|ipc"}));
}

TEST(SdkCaps, CheckAndOpenOfAnSdkDriverRefuseWhatCapsLeaveOut) {
  const psb_driver &d = full();  // reliable, volatile, wait, transport mem; check() of its own
  TestRun run;
  run.cfg.qos.reliability = PSB_BEST_EFFORT;
  run.cfg.notify = PSB_NOTIFY_POLL;
  int count = -1;
  EXPECT_EQ(
      check(d, run, &count),
      (Refused{{"reliability",
                "sdkt: reliability 'best_effort' is not supported; this driver supports "
                "reliable"},
               {"notify", "sdkt: notify 'poll' is not supported; this driver supports wait"}}));
  EXPECT_EQ(count, 2);
  psb_error err{};
  EXPECT_EQ(d.open(&run.cfg, &err), nullptr);
  EXPECT_STREQ(err.message,
               "sdkt: reliability 'best_effort' is not supported; this driver supports reliable; "
               "notify 'poll' is not supported; this driver supports wait");
  // The driver's own refusal of the same setting (transport) stands alone, at open() too.
  TestRun tcp({}, "tcp");
  tcp.cfg.notify = PSB_NOTIFY_POLL;
  EXPECT_EQ(d.open(&tcp.cfg, &err), nullptr);
  EXPECT_STREQ(err.message,
               "sdkt: transport 'tcp' is not supported; use mem; notify 'poll' is not supported; "
               "this driver supports wait");
}

// ---- PerProcess --------------------------------------------------------------------------

struct Counted {
  explicit Counted(int v) : value(v) { ++made; }
  ~Counted() { ++gone; }
  int value;
  static inline std::atomic<int> made{0}, gone{0};
};

TEST(SdkPerProcess, OnePerKeyMadeByTheFirstGoneWithTheLast) {
  psb::sdk::PerProcess<int, Counted> shared;
  Counted::made = Counted::gone = 0;
  auto make = [](int v) { return [v] { return std::make_unique<Counted>(v); }; };
  {
    auto a = shared.acquire(1, make(10));
    auto b = shared.acquire(1, make(99));  // the same one: make() not called
    auto c = shared.acquire(2, make(20));
    EXPECT_EQ(&*a, &*b);
    EXPECT_EQ(b->value, 10);
    EXPECT_EQ(c->value, 20);
    EXPECT_EQ(Counted::made, 2);
    EXPECT_EQ(shared.users(1), 2);
    EXPECT_EQ(shared.users(2), 1);
    { auto moved = std::move(a); }  // a moved-from lease lets go of nothing
    EXPECT_FALSE(a);
    EXPECT_EQ(shared.users(1), 1);
    EXPECT_EQ(Counted::gone, 0);
  }
  EXPECT_EQ(Counted::gone, 2);
  EXPECT_EQ(shared.users(1), 0);
  auto again = shared.acquire(1, make(11));  // made anew after the last one went
  EXPECT_EQ(again->value, 11);
  EXPECT_EQ(Counted::made, 3);
  decltype(again) empty;
  EXPECT_FALSE(empty);
}

TEST(SdkPerProcess, AMakeThatThrowsKeepsNothing) {
  psb::sdk::PerProcess<std::string, Counted> shared;
  EXPECT_THROW(shared.acquire("k", []() -> std::unique_ptr<Counted> { throw std::bad_alloc(); }),
               std::bad_alloc);
  EXPECT_EQ(shared.users("k"), 0);
  EXPECT_THROW(shared.acquire("k", [] { return std::unique_ptr<Counted>(); }), psb::sdk::Error);
  EXPECT_EQ(shared.users("k"), 0);
  EXPECT_EQ(shared.acquire("k", [] { return std::make_unique<Counted>(5); })->value, 5);
}

TEST(SdkPerProcess, ThreadsShareOne) {
  psb::sdk::PerProcess<int, Counted> shared;
  Counted::made = Counted::gone = 0;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        auto lease = shared.acquire(7, [] { return std::make_unique<Counted>(7); });
        if (lease->value != 7 || Counted::made - Counted::gone != 1) ++wrong;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "never two alive at once";
  EXPECT_EQ(Counted::made, Counted::gone);
}

}  // namespace

TEST(SdkRefusals, RunSettingsRefuseAnAddressThatIsNotIPv4) {
  TestRun run;
  const char *const peers[] = {"198.18.0.2", "robot1", nullptr};
  run.cfg.local_address = "198.18.0.1";
  run.cfg.peer_addresses = peers;
  psb::sdk::RunSettings s;
  auto keep = [&](Refusals &r) { s.keep(run.cfg, r, "it names the topics"); };
  EXPECT_EQ(refusal_of(keep),
            "hosts: local_address and peer_addresses must be IPv4 addresses, e.g. 198.18.0.2 "
            "('robot1' is not)");
  EXPECT_EQ(s.peer_addresses, (std::vector<std::string>{"198.18.0.2", "robot1"}));
  const char *const good[] = {"198.18.0.2", nullptr};
  run.cfg.peer_addresses = good;
  EXPECT_EQ(refusal_of(keep), "");
}

TEST(SdkRefusals, RunSettingsAddressAndNeedPeers) {
  TestRun run;
  psb::sdk::RunSettings s;
  // What a tcp transport does: keep the run's settings, then need peers across hosts.
  auto keep_and_need_peers = [&](Refusals &r) {
    s.keep(run.cfg, r, "it names the topics");
    s.need_peers(r, "transport tcp across hosts connects to");
  };
  EXPECT_EQ(refusal_of(keep_and_need_peers), "");
  EXPECT_EQ(s.address(), "127.0.0.1");   // one host
  run.cfg.local_address = "198.18.0.1";  // across hosts, no peers
  EXPECT_EQ(refusal_of(keep_and_need_peers),
            "hosts: transport tcp across hosts connects to the run's other hosts, and none was "
            "given: give each one's address with --peer ADDRESS");
  EXPECT_EQ(s.address(), "198.18.0.1");
  const char *const peers[] = {"198.18.0.2", nullptr};
  run.cfg.peer_addresses = peers;
  EXPECT_EQ(refusal_of(keep_and_need_peers), "");
}

// SampleType read from options and a max_payload (at most 100 elements), and what it
// refused ("" when nothing).
struct ReadSampleType {
  ReadSampleType(KV options, uint64_t max_payload) {
    TestRun run(std::move(options));
    run.cfg.max_payload = max_payload;
    refusal = refusal_of([&](Refusals &r) { type.read(run.cfg, r, 100); });
  }
  psb::sdk::SampleType type;
  std::string refusal;
};

TEST(SdkRefusals, SampleTypeReadsTypeAndElements) {
  EXPECT_EQ(psb::sdk::kHeaderSize, 32u);
  const ReadSampleType neither(KV{}, 1024);  // bytes
  EXPECT_EQ(neither.refusal, "");
  EXPECT_FALSE(neither.type.complex);
  EXPECT_EQ(neither.type.elements, 16u);
  const ReadSampleType complex(KV{{"type", "complex"}, {"elements", "40"}}, 32);
  EXPECT_EQ(complex.refusal, "");
  EXPECT_TRUE(complex.type.complex);
  EXPECT_EQ(complex.type.elements, 40u);
  EXPECT_EQ(ReadSampleType(KV{{"elements", "8"}}, 64).refusal,
            "option:elements: option elements applies to type=complex only; add --option "
            "type=complex");
  EXPECT_EQ(ReadSampleType(KV{{"type", "complex"}}, 64).refusal,
            "size: type complex is sized by option elements=N; use --size 32");
  EXPECT_EQ(ReadSampleType(KV{{"type", "complex"}, {"elements", "101"}}, 32).refusal,
            "option:elements: option elements='101': use a whole number from 1 to 100");
}

TEST(SdkEnvironment, DottedVersionJoinsALibrarysThreeNumbers) {
  EXPECT_EQ(psb::sdk::dotted_version([](int *a, int *b, int *c) { *a = 4, *b = 3, *c = 14; }),
            "4.3.14");
}

TEST(SdkCaps, HostTransportsRefuseTheOthersAcrossHostsOnly) {
  static const char *const transports[] = {"shm", "udp", "config", nullptr};
  static const char *const crossing[] = {"udp", "config", nullptr};
  const psb_capabilities caps{.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
                              .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
                              .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
                              .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
                              .transports = transports,
                              .option_keys = nullptr,
                              .max_payload = 1024,
                              .readers_per_topic = 0,
                              .writers_per_topic = 0,
                              .crosses_hosts = 1};
  auto refused = [&](const char *transport, const char *local) {
    TestRun run;
    run.cfg.transport = transport;
    run.cfg.local_address = local;
    Refusals found;
    psb::sdk::refuse_outside_caps(caps, run.cfg, found, crossing);
    std::string text;
    for (const auto &r : found.all()) text += r.setting + ": " + r.reason;
    return text;
  };
  const std::string shm_across =
      "hosts: transport shm does not cross hosts; across hosts use --transport udp or config";
  EXPECT_EQ(refused("shm", "198.18.0.1"), shm_across);
  EXPECT_EQ(refused("default", "198.18.0.1"), shm_across);  // the first transport is shm
  EXPECT_EQ(refused(nullptr, "198.18.0.1"), shm_across);
  EXPECT_EQ(refused("udp", "198.18.0.1"), "");
  EXPECT_EQ(refused("config", "198.18.0.1"), "");
  EXPECT_EQ(refused("shm", nullptr), "");  // on one host every transport is fine
  // A transport not offered at all is refused as such, not as one that stays on a host.
  EXPECT_EQ(refused("tcp", "198.18.0.1"),
            "transport: transport 'tcp' is not supported; this driver supports shm|udp|config");
}

TEST(SdkBroker, AddressesAreHostAndPortOrRefusedWithAnExample) {
  psb::sdk::BrokerAddress a;
  Refusals ok;
  ASSERT_TRUE(psb::sdk::broker_address("127.0.0.1:1883", 1883, ok, a));
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 1883);
  ASSERT_TRUE(psb::sdk::broker_address("[::1]:5672", 5672, ok, a));
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.text, "[::1]:5672");
  EXPECT_TRUE(ok.empty());
  for (const char *bad :
       {"::1:5672", "localhost", "host:0", "host:65536", "host:12x", ":80", "[::1:80", ""}) {
    Refusals refused;
    psb::sdk::BrokerAddress untouched{"kept", "kept", 7};
    EXPECT_FALSE(psb::sdk::broker_address(bad, 4222, refused, untouched)) << bad;
    ASSERT_EQ(refused.size(), 1u) << bad;
    EXPECT_TRUE(refused.has("option:broker")) << bad;
    EXPECT_NE(refused.all()[0].reason.find("e.g. 127.0.0.1:4222"), std::string::npos) << bad;
    EXPECT_EQ(untouched.port, 7) << bad;
  }
}
