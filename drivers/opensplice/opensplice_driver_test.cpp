// The opensplice driver through its ABI table only (the built .so loaded with dlopen, as
// psbench-node does), within one process: what the history keeps with known answers, a
// late joiner's transient-local history, a process that joins one domain after another
// (idlpp's copy-in caches, copyin_cache.cmake), and a second configuration for an open
// domain refused. Two-process runs are tests/test_driver_opensplice.py's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"

namespace {

const psb_driver &drv() { return psb_test::driver_under_test(); }

std::string new_run_id() {
  static int n = 0;
  return "osplt" + std::to_string(getpid()) + "x" + std::to_string(n++);
}

// A psb_config that owns its strings.
struct Cfg {
  std::string run_id = new_run_id(), transport = "standalone";
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<psb_option> opts;
  psb_config c{};
  explicit Cfg(psb_qos qos = {PSB_RELIABLE, PSB_VOLATILE, 0, 0}) {
    c.notify = PSB_NOTIFY_WAIT;
    c.qos = qos;
    c.max_payload = 64;
  }
  const psb_config *get() {
    opts.clear();
    for (auto &[k, v] : options) opts.push_back({k.c_str(), v.c_str()});
    c.run_id = run_id.c_str();
    c.transport = transport.c_str();
    c.options = opts.empty() ? nullptr : opts.data();
    c.option_count = opts.size();
    return &c;
  }
};

// One context with at most one writer and one reader of topic "t", freed in order.
struct Side {
  explicit Side(Cfg &cfg) : topic("psb_" + cfg.run_id + "_t") { ctx = drv().open(cfg.get(), &err); }
  ~Side() {
    if (reader) drv().destroy_reader(reader);
    if (writer) drv().destroy_writer(writer);
    if (ctx) drv().close(ctx);
  }
  bool add_writer() { return (writer = drv().create_writer(ctx, topic.c_str(), &err)) != nullptr; }
  // Until the writer and the reader see each other (at most 10 s), then 200 ms more.
  bool matched() {
    for (int i = 0; i < 1000; ++i) {
      if (drv().matched_readers(writer) >= 1 && drv().matched_writers(reader) >= 1) {
        usleep(200'000);
        return true;
      }
      usleep(10'000);
    }
    return false;
  }
  bool add_reader() {
    return (reader = drv().create_reader(ctx, topic.c_str(), nullptr, nullptr, &err)) != nullptr;
  }
  bool write(uint64_t seq, size_t size = 64) {
    std::vector<uint8_t> m(size, uint8_t(seq));
    std::memset(m.data() + 28, 0, 4);  // flags
    std::memcpy(m.data(), &seq, sizeof seq);
    return drv().write(writer, m.data(), m.size(), &err) == 0;
  }
  // The sequence numbers of every sample waiting (each take waits up to 1 s).
  std::vector<uint64_t> take_all() {
    std::vector<uint64_t> seqs;
    const void *data;
    size_t len;
    while (drv().take(reader, 1'000'000'000, &data, &len, &err) == 1) {
      uint64_t seq;
      std::memcpy(&seq, data, sizeof seq);
      seqs.push_back(seq);
    }
    return seqs;
  }
  psb_error err{};
  std::string topic;
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
};

std::vector<uint64_t> range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> v;
  for (uint64_t s = first; s <= last; ++s) v.push_back(s);
  return v;
}

TEST(OpenspliceDriver, DescribesItsBuild) {
  const std::string version = drv().version();
  EXPECT_EQ(version.rfind("6.9.210323OSS (libdcpssac.so; built from source at 5ec834ef215e", 0), 0u)
      << version;
  EXPECT_NE(version.find("-fcommon"), std::string::npos) << version;
}

// A reader that does not take while `written` samples go out keeps what its history says:
// keep_last 3 the newest 3, keep_all every sample.
struct HistoryCase {
  const char *name;
  psb_qos qos;
  uint64_t written, first_kept;
};
void PrintTo(const HistoryCase &c, std::ostream *os) { *os << c.name; }
class OpenspliceHistory : public testing::TestWithParam<HistoryCase> {};
INSTANTIATE_TEST_SUITE_P(
    Each, OpenspliceHistory,
    testing::Values(HistoryCase{"KeepLast3", {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 3}, 10, 7},
                    HistoryCase{"KeepAll", {PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0}, 500, 0}),
    [](const auto &info) { return std::string(info.param.name); });

TEST_P(OpenspliceHistory, KeepsWhatItsHistorySaysForAReaderThatDoesNotTake) {
  Cfg cfg(GetParam().qos);
  Side s(cfg);
  ASSERT_TRUE(s.ctx && s.add_reader() && s.add_writer() && s.matched()) << s.err.message;
  for (uint64_t seq = 0; seq < GetParam().written; ++seq)
    ASSERT_TRUE(s.write(seq)) << s.err.message;
  EXPECT_EQ(s.take_all(), range(GetParam().first_kept, GetParam().written - 1));
}

TEST(OpenspliceDriver, ALateJoinerGetsTheTransientLocalHistory) {
  Cfg cfg({PSB_RELIABLE, PSB_TRANSIENT_LOCAL, PSB_KEEP_LAST, 2});
  Side s(cfg);
  ASSERT_TRUE(s.ctx && s.add_writer()) << s.err.message;
  // OpenSplice connects a new writer to its topic's data asynchronously: a sample written
  // at once is kept for a resend and reaches a late joiner beside the history (seq 0, 3,
  // 4 here). psbench's nodes write only once matched, so it is only this test's concern.
  usleep(500'000);
  for (uint64_t seq = 0; seq < 5; ++seq) ASSERT_TRUE(s.write(seq)) << s.err.message;
  ASSERT_TRUE(s.add_reader()) << s.err.message;
  EXPECT_EQ(s.take_all(), range(3, 4));
}

TEST(OpenspliceDriver, AVolatileLateJoinerGetsNothingOld) {
  Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 2});
  Side s(cfg);
  ASSERT_TRUE(s.ctx && s.add_writer()) << s.err.message;
  usleep(500'000);  // as above
  for (uint64_t seq = 0; seq < 5; ++seq) ASSERT_TRUE(s.write(seq)) << s.err.message;
  ASSERT_TRUE(s.add_reader()) << s.err.message;
  EXPECT_EQ(s.take_all(), std::vector<uint64_t>{});
}

// Without copyin_cache.cmake the second domain's writes failed with
// DDS_RETCODE_OUT_OF_RESOURCES ("Specified type is not an array nor a sequence").
TEST(OpenspliceDriver, OneDomainAfterAnotherInOneProcess) {
  for (const char *domain : {"41", "42", "41"}) {
    for (const char *type : {"bytes", "complex"}) {
      Cfg cfg({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0});
      cfg.options = {{"domain_id", domain}, {"type", type}};
      if (std::strcmp(type, "complex") == 0) cfg.c.max_payload = 32;
      Side s(cfg);
      ASSERT_TRUE(s.ctx && s.add_reader() && s.add_writer()) << s.err.message;
      for (uint64_t seq = 0; seq < 3; ++seq)
        ASSERT_TRUE(s.write(seq, cfg.c.max_payload))
            << domain << " " << type << ": " << s.err.message;
      EXPECT_EQ(s.take_all().size(), 3u) << domain << " " << type;
    }
  }
}

// A user's XML (transport config) of the single-process deployment with domain id `id`.
std::string user_xml(int id) {
  const std::string path =
      "/tmp/psbench_osplt" + std::to_string(getpid()) + "_" + std::to_string(id) + ".xml";
  FILE *f = std::fopen(path.c_str(), "w");
  std::fprintf(f,
               "<OpenSplice><Domain><Name>mine</Name><Id>%d</Id><SingleProcess>true"
               "</SingleProcess></Domain></OpenSplice>\n",
               id);
  std::fclose(f);
  return path;
}

TEST(OpenspliceDriver, ASecondConfigurationInOneProcessIsRefused) {
  const std::string first_xml = user_xml(44), second_xml = user_xml(45);
  Cfg first, second;
  first.transport = second.transport = "config";
  first.options = {{"ospl_uri", "file://" + first_xml}};
  second.options = {{"ospl_uri", "file://" + second_xml}};
  {
    Side a(first);
    ASSERT_TRUE(a.ctx && a.add_reader() && a.add_writer()) << a.err.message;
    ASSERT_TRUE(a.write(1)) << a.err.message;
    EXPECT_EQ(a.take_all(), range(1, 1));
    Side same(first);  // the same configuration shares the domain
    EXPECT_NE(same.ctx, nullptr) << same.err.message;
    Side b(second);
    EXPECT_EQ(b.ctx, nullptr);
    EXPECT_NE(std::string(b.err.message)
                  .find("already open in this process with another "
                        "configuration"),
              std::string::npos)
        << b.err.message;
  }
  Side b(second);  // once the first is closed, the second may open
  EXPECT_NE(b.ctx, nullptr) << b.err.message;
  std::remove(first_xml.c_str());
  std::remove(second_xml.c_str());
}

}  // namespace
