// pub/sub through the real node and the real udp and shm baseline drivers: throughput
// counts add up, arrivals past the store are counted, echoes are timed, several
// publishers feed one subscriber. Behaviour only, never timings.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "node_process.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kNode = PSBENCH_NODE;
using psb_test::driver_path;
using psb_test::finish;
using psb_test::fresh_run_id;
using psb_test::go;
using psb_test::Proc;
using psb_test::ready;
using psb_test::slurp;
using psb_test::start;

// The number after "key": inside the object that follows "block": (the summary is
// flat enough for this). -1 for null, -2 when absent.
int64_t num(const std::string &json, const std::string &block, const std::string &key) {
  size_t at = json.find("\"" + block + "\": {");
  if (at == std::string::npos) return -2;
  size_t end = json.find('}', at);
  size_t k = json.find("\"" + key + "\": ", at);
  if (k == std::string::npos || k > end) return -2;
  const char *p = json.c_str() + k + key.size() + 4;
  if (std::strncmp(p, "null", 4) == 0) return -1;
  return std::strtoll(p, nullptr, 10);
}

std::vector<int64_t> per_bin(const std::string &json) {
  std::vector<int64_t> out;
  size_t at = json.find("\"per_bin\": [");
  if (at == std::string::npos) return out;
  const char *p = json.c_str() + at + 12;
  while (*p && *p != ']') {
    char *end;
    out.push_back(std::strtoll(p, &end, 10));
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  return out;
}

int64_t sum(const std::vector<int64_t> &v) {
  int64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

struct Record {  // docs/node.md, samples file version 2
  uint64_t seq;
  int64_t intended_ns, latency_ns, send_ns;
  uint32_t flags, writer;
};
static_assert(sizeof(Record) == 40);
struct Samples {
  uint32_t kind = 0;
  std::vector<Record> records;
};

Samples read_samples(const std::string &path) {
  Samples s;
  std::ifstream f(path, std::ios::binary);
  char header[64] = {};
  f.read(header, 64);
  uint64_t count;
  std::memcpy(&count, header + 16, 8);
  std::memcpy(&s.kind, header + 24, 4);
  s.records.resize(count);
  f.read(reinterpret_cast<char *>(s.records.data()), std::streamsize(count * sizeof(Record)));
  return s;
}

class PubSub : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = (fs::temp_directory_path() / ("psb-pubsub-" + fresh_run_id())).string();
    fs::create_directories(out_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(out_);
  }

  std::vector<std::string> base(const std::string &drv, const std::string &role,
                                const std::string &run) {
    return {kNode,
            "--driver",
            driver_path(drv),
            "--role",
            role,
            "--out",
            out_,
            "--run-id",
            run,
            "--match-timeout",
            "20",
            "--idle-timeout",
            "3",
            "--timeout",
            "120"};
  }

  // One node, roles as threads; returns its exit code.
  int run(std::vector<std::string> args, const std::string &tag = "node") {
    return finish(start(args, out_ + "/" + tag + ".stderr", false));
  }
  // A udp sub process on --barrier stdio, READY and told GO, with `extra` after base();
  // its stderr in sub.stderr. Call through ASSERT_NO_FATAL_FAILURE.
  void start_sub(const std::string &run_id, const std::vector<std::string> &extra, Proc &sub) {
    std::vector<std::string> args = base("udp", "sub", run_id);
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--barrier", "stdio"});
    sub = start(args, out_ + "/sub.stderr", true);
    ASSERT_TRUE(ready(sub)) << err("sub");
    go(sub);
  }
  std::string json(const std::string &stem) { return slurp(out_ + "/" + stem + ".json"); }
  std::string err(const std::string &tag = "node") { return slurp(out_ + "/" + tag + ".stderr"); }

  std::string out_;
};

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// sent = received + lost on the sub, bins add up to the totals on both sides.
void expect_counts_add_up(const std::string &pub, const std::string &sub, uint64_t size) {
  const int64_t received = num(sub, "throughput", "received");
  EXPECT_GT(received, 0) << sub;
  EXPECT_EQ(num(sub, "counts", "corrupted"), 0);
  EXPECT_EQ(num(sub, "counts", "duplicated"), 0);
  EXPECT_EQ(num(sub, "counts", "sent"), received + num(sub, "counts", "lost")) << sub;
  EXPECT_EQ(num(sub, "counts", "sent"), num(pub, "counts", "sent"));
  EXPECT_EQ(num(sub, "throughput", "received_bytes"), received * int64_t(size));
  EXPECT_EQ(sum(per_bin(sub)), received);
  EXPECT_LE(num(sub, "throughput", "first_arrival_ns"), num(sub, "throughput", "last_arrival_ns"));
  EXPECT_EQ(num(sub, "throughput", "bin_ns"), 1000000000);
  EXPECT_EQ(num(pub, "throughput", "sent"), num(pub, "counts", "sent"));
  EXPECT_EQ(num(pub, "throughput", "sent_bytes"), num(pub, "counts", "sent") * int64_t(size));
  EXPECT_EQ(sum(per_bin(pub)), num(pub, "throughput", "sent"));
  EXPECT_LE(num(pub, "throughput", "first_send_ns"), num(pub, "throughput", "last_send_ns"));
}

}  // namespace

TEST_F(PubSub, ThroughputCountsAddUpThroughUdp) {
  ASSERT_EQ(run(base("udp", "pub,sub", fresh_run_id()) +
                std::vector<std::string>{"--count", "3000", "--rate", "20000", "--size", "100"}),
            0)
      << err();
  std::string pub = json("pub"), sub = json("sub");
  expect_counts_add_up(pub, sub, 100);
  EXPECT_EQ(num(pub, "throughput", "offered_rate_hz"), 20000);
  EXPECT_NE(pub.find("\"echo\": null"), std::string::npos);
  EXPECT_NE(
      sub.find("\"publishers\": 1, \"writer_id\": 0, \"topic\": \"data\", \"echo_every\": null"),
      std::string::npos)
      << sub;
}

TEST_F(PubSub, ThroughputCountsAddUpThroughShmReliableWithoutLoss) {
  for (const char *notify : {"listener", "wait", "poll"}) {
    ASSERT_EQ(run(base("shm", "pub,sub", fresh_run_id()) +
                  std::vector<std::string>{"--count", "5000", "--reliability", "reliable",
                                           "--notify", notify}),
              0)
        << notify << ": " << err();
    std::string pub = json("pub"), sub = json("sub");
    expect_counts_add_up(pub, sub, 64);
    EXPECT_EQ(num(sub, "counts", "lost"), 0) << notify;
    EXPECT_EQ(num(sub, "throughput", "received"), 5000) << notify;
    EXPECT_EQ(num(pub, "throughput", "offered_rate_hz"), 0);
  }
}

TEST_F(PubSub, ArrivalsBeyondTheStoreAreReceivedNotLost) {
  // 300 messages into a store of 100: 200 counted, not stored, not lost.
  ASSERT_EQ(run(base("shm", "pub,sub", fresh_run_id()) +
                std::vector<std::string>{"--duration", "0.3", "--rate", "1000", "--max-samples",
                                         "100", "--reliability", "reliable"}),
            0)
      << err();
  std::string pub = json("pub"), sub = json("sub");
  const int64_t sent = num(pub, "counts", "sent");
  EXPECT_GT(sent, 100) << "pub must not stop at --max-samples: it stores nothing\n" << pub;
  EXPECT_EQ(num(sub, "counts", "samples"), 100);
  EXPECT_EQ(num(sub, "throughput", "beyond_capacity"), sent - 100) << sub;
  EXPECT_EQ(num(sub, "throughput", "received"), sent);
  EXPECT_EQ(num(sub, "counts", "lost"), 0) << sub;
  expect_counts_add_up(pub, sub, 64);
  EXPECT_EQ(read_samples(out_ + "/sub.samples").records.size(), 100u);
}

TEST_F(PubSub, EchoedSamplesAreTimedIntoPubSamples) {
  for (const char *notify : {"listener", "wait", "poll"}) {
    ASSERT_EQ(run(base("shm", "pub,sub", fresh_run_id()) +
                  std::vector<std::string>{"--count", "2000", "--echo-every", "10", "--reliability",
                                           "reliable", "--notify", notify}),
              0)
        << notify << ": " << err();
    std::string pub = json("pub"), sub = json("sub");
    EXPECT_EQ(num(pub, "echo", "every"), 10);
    EXPECT_EQ(num(pub, "echo", "expected"), 200) << pub;
    EXPECT_EQ(num(pub, "echo", "received"), 200) << notify << "\n" << pub;
    EXPECT_EQ(num(pub, "echo", "lost"), 0);
    EXPECT_EQ(num(sub, "echo", "sent"), 200) << sub;
    EXPECT_EQ(num(sub, "echo", "write_errors"), 0);
    EXPECT_NE(pub.find("\"samples_file\": \"pub.samples\", \"sample_kind\": \"rtt\""),
              std::string::npos)
        << pub;
    EXPECT_NE(pub.find("\"echo_every\": 10"), std::string::npos);
    EXPECT_NE(pub.find("_data_echo\""), std::string::npos);  // topics list the echo topic
    Samples s = read_samples(out_ + "/pub.samples");
    EXPECT_EQ(s.kind, 1u);  // rtt
    ASSERT_EQ(s.records.size(), 200u);
    for (size_t i = 0; i < s.records.size(); ++i) {
      EXPECT_EQ(s.records[i].seq, i * 10);
      EXPECT_GT(s.records[i].latency_ns, 0);
    }
    expect_counts_add_up(pub, sub, 64);  // the echo does not disturb the data counts
  }
}

TEST_F(PubSub, EchoCountsAddUpThroughUdp) {
  ASSERT_EQ(
      run(base("udp", "pub,sub", fresh_run_id()) +
          std::vector<std::string>{"--count", "2000", "--rate", "10000", "--echo-every", "7"}),
      0)
      << err();
  std::string pub = json("pub");
  const int64_t expected = num(pub, "echo", "expected");
  EXPECT_EQ(expected, (2000 + 6) / 7);
  EXPECT_EQ(num(pub, "echo", "received") + num(pub, "echo", "lost"), expected);
  EXPECT_EQ(int64_t(read_samples(out_ + "/pub.samples").records.size()),
            num(pub, "echo", "received"));
}

// Two publisher processes into one subscriber process (inter-process, udp: several
// senders to one port).
TEST_F(PubSub, TwoPublishersIntoOneSubscriberThroughUdp) {
  const std::string run_id = fresh_run_id();
  Proc sub;
  ASSERT_NO_FATAL_FAILURE(start_sub(run_id, {"--publishers", "2", "--count", "2000"}, sub));
  std::vector<Proc> pubs;
  for (int k = 0; k < 2; ++k) {
    std::string name = "pub-" + std::to_string(k + 1);
    pubs.push_back(start(
        base("udp", "pub", run_id) + std::vector<std::string>{"--name", name, "--publishers", "2",
                                                              "--writer-id", std::to_string(k),
                                                              "--count", "2000", "--rate", "10000"},
        out_ + "/" + name + ".stderr", false));
  }
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(finish(pubs[size_t(k)]), 0) << err("pub-" + std::to_string(k + 1));
  ASSERT_EQ(finish(sub), 0) << err("sub");
  std::string s = json("sub");
  EXPECT_EQ(num(s, "counts", "sent"), 4000) << s;  // the sum of both end markers (or counts)
  EXPECT_EQ(num(s, "counts", "corrupted"), 0);
  EXPECT_EQ(num(s, "throughput", "received") + num(s, "counts", "lost"), 4000);
  EXPECT_EQ(sum(per_bin(s)), num(s, "throughput", "received"));
  EXPECT_NE(s.find("\"publishers\": 2"), std::string::npos);
  // Records of writer 0 in sequence order, then writer 1's.
  Samples samples = read_samples(out_ + "/sub.samples");
  ASSERT_EQ(int64_t(samples.records.size()), num(s, "counts", "samples"));
  size_t restarts = 0;
  for (size_t i = 1; i < samples.records.size(); ++i)
    if (samples.records[i].seq <= samples.records[i - 1].seq) ++restarts;
  EXPECT_EQ(restarts, 1u) << "two runs of increasing seq, one per writer";
  std::string p2 = json("pub-2");
  EXPECT_NE(p2.find("\"writer_id\": 1"), std::string::npos);
}

// A writer id the sub does not expect is not one of its writers: corrupted, not lost.
TEST_F(PubSub, AWriterIdOutsideTheRunIsCorrupted) {
  const std::string run_id = fresh_run_id();
  Proc sub;
  ASSERT_NO_FATAL_FAILURE(start_sub(run_id, {"--count", "200", "--idle-timeout", "1"}, sub));
  EXPECT_EQ(run(base("udp", "pub", run_id) + std::vector<std::string>{"--publishers", "2",
                                                                      "--writer-id", "1", "--count",
                                                                      "200", "--rate", "10000"},
                "pub"),
            0)
      << err("pub");
  finish(sub);
  std::string s = json("sub");
  EXPECT_EQ(num(s, "counts", "samples"), 0) << s;
  EXPECT_EQ(num(s, "counts", "corrupted"), num(s, "counts", "received"));
  EXPECT_EQ(num(s, "throughput", "received"), 0);
  EXPECT_NE(s.find("\"first_arrival_ns\": null"), std::string::npos);
}

// shm has one writer per ring: the node refuses a second publisher before anything runs.
TEST_F(PubSub, ShmRefusesASecondPublisherUpFront) {
  EXPECT_EQ(run(base("shm", "sub", fresh_run_id()) + std::vector<std::string>{"--publishers", "2"}),
            2);
  EXPECT_NE(err().find("--publishers 2 is not supported"), std::string::npos) << err();
  EXPECT_FALSE(fs::exists(out_ + "/sub.json"));
}
