// --role module through the real node and the udp and shm drivers: small graphs of
// real processes (two sources -> a fusion -> a sink), whose record files must give exact
// known answers: every origin a sink records names a source activation whose start it
// carries unchanged, the merge of `any` and `all` is what their arrivals say it must be,
// and the counts add up. Behaviour only, never timings.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "module_test_support.hpp"

namespace fs = std::filesystem;
using namespace psb_test;

namespace {

constexpr int64_t kPeriodA = 10'000'000, kPeriodB = 25'000'000;
constexpr uint32_t kTimer = 0xFFFFFFFFu;

struct ModuleSpec {
  std::string name;
  std::vector<std::string> args;
};

// One origin set per activation, in activation order: source -> (newest_seq, newest_ns,
// oldest_ns).
using OriginSet = std::map<uint32_t, std::tuple<uint64_t, int64_t, int64_t>>;
std::map<uint64_t, OriginSet> by_activation(const std::vector<Origin> &origins) {
  std::map<uint64_t, OriginSet> out;
  for (auto &o : origins) out[o.activation][o.source] = {o.newest_seq, o.newest_ns, o.oldest_ns};
  return out;
}

void expect_edge(const std::string &writer_json, const std::string &reader_json,
                 const std::string &topic);

// The files of the two-sources graph, and each source's start_ns by activation number.
struct FusionGraph {
  ModuleFiles a, b, fusion, sink;
  std::vector<std::map<uint64_t, int64_t>> starts;
};

class ModuleGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = fresh_run_id();
    out_ = (fs::temp_directory_path() / ("psb-module-" + run_)).string();
    fs::create_directories(out_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(out_);
  }

  std::vector<std::string> base(const std::string &drv, const std::string &notify) {
    return {PSBENCH_NODE, "--driver",  driver_path(drv), "--role",    "module",
            "--out",      out_,        "--run-id",       run_,        "--notify",
            notify,       "--barrier", "stdio",          "--sources", "2",
            "--size",     "160",       "--timeout",      "20"};
  }

  // Starts every module, waits until all are READY, then says GO to all; returns each
  // one's exit code (in the order given).
  std::vector<int> run_graph(const std::string &drv, const std::string &notify,
                             const std::vector<ModuleSpec> &modules) {
    std::vector<Proc> procs;
    for (auto &m : modules) {
      std::vector<std::string> args = base(drv, notify);
      args.push_back("--module");
      args.push_back(m.name);
      args.insert(args.end(), m.args.begin(), m.args.end());
      procs.push_back(start(args, out_ + "/" + m.name + ".stderr"));
    }
    for (size_t i = 0; i < procs.size(); ++i)
      EXPECT_TRUE(ready(procs[i])) << modules[i].name << ": " << err(modules[i].name);
    for (auto &p : procs) go(p);
    std::vector<int> codes;
    for (auto &p : procs) codes.push_back(finish(p));
    return codes;
  }

  std::string err(const std::string &name) { return slurp(out_ + "/" + name + ".stderr"); }

  // A source's own records: one activation per --count, on its ticks exactly, each with
  // its own origin (newest = oldest = its start). Returns start_ns by activation number.
  std::map<uint64_t, int64_t> check_source(const ModuleFiles &f, uint32_t index, int64_t period,
                                           uint64_t count, uint64_t warmup = 0) {
    std::map<uint64_t, int64_t> start;
    EXPECT_EQ(f.activations.size(), count) << f.json;
    EXPECT_EQ(f.origins.size(), count);
    for (size_t k = 0; k < f.activations.size(); ++k) {
      const Activation &a = f.activations[k];
      EXPECT_EQ(a.activation, warmup + k);
      EXPECT_EQ(a.trigger, kTimer);
      EXPECT_EQ(a.scheduled_ns - f.activations[0].scheduled_ns, int64_t(k) * period);
      EXPECT_LE(a.scheduled_ns, a.start_ns);
      EXPECT_LE(a.start_ns, a.end_ns);
      start[a.activation] = a.start_ns;
    }
    for (size_t k = 0; k < f.origins.size() && k < f.activations.size(); ++k) {
      const Origin &o = f.origins[k];
      EXPECT_EQ(o.activation, f.activations[k].activation);
      EXPECT_EQ(o.source, index);
      EXPECT_EQ(o.newest_seq, o.activation);
      EXPECT_EQ(o.newest_ns, f.activations[k].start_ns);
      EXPECT_EQ(o.oldest_ns, o.newest_ns);
    }
    EXPECT_EQ(number_after(f.json, "\"counts\"", "activations"), int64_t(count));
    EXPECT_NE(f.json.find("\"ended_by\": \"count\""), std::string::npos) << f.json;
    return start;
  }

  // Every origin names a source activation and carries its start unchanged.
  void check_origins_travelled(const ModuleFiles &f,
                               const std::vector<std::map<uint64_t, int64_t>> &starts) {
    ASSERT_FALSE(f.origins.empty()) << f.json;
    for (const Origin &o : f.origins) {
      ASSERT_LT(o.source, starts.size());
      auto it = starts[o.source].find(o.newest_seq);
      ASSERT_NE(it, starts[o.source].end()) << "source " << o.source << " seq " << o.newest_seq;
      EXPECT_EQ(o.newest_ns, it->second);
      EXPECT_LE(o.oldest_ns, o.newest_ns);
    }
  }

  // Two sources (a: every 10 ms, 60 times; b: every 25 ms, 24 times) into a fusion on
  // `fusion_on` (its output f), f into a sink with `sink_on` (its --on and what follows),
  // through drv and notify: every module ended well, the sources' records and each
  // edge's counts checked.
  FusionGraph run_fusion_graph(const std::string &drv, const std::string &notify,
                               const std::string &fusion_on,
                               const std::vector<std::string> &sink_on) {
    std::vector<std::string> sink = {"--module-id", "3", "--input", "f:1", "--on"};
    sink.insert(sink.end(), sink_on.begin(), sink_on.end());
    auto codes = run_graph(drv, notify,
                           {{"sink", sink},
                            {"fusion",
                             {"--module-id", "2", "--input", "a:1", "--input", "b:1", "--on",
                              fusion_on, "--output", "f:160:1"}},
                            {"srcA",
                             {"--module-id", "0", "--source-index", "0", "--period", "10000000",
                              "--count", "60", "--output", "a:112:1"}},
                            {"srcB",
                             {"--module-id", "1", "--source-index", "1", "--period", "25000000",
                              "--count", "24", "--output", "b:112:1"}}});
    for (auto [i, name] : {std::pair{0, "sink"}, {1, "fusion"}, {2, "srcA"}, {3, "srcB"}})
      EXPECT_EQ(codes[size_t(i)], 0) << name << ": " << err(name);
    FusionGraph g{read_module(out_, "srcA"),
                  read_module(out_, "srcB"),
                  read_module(out_, "fusion"),
                  read_module(out_, "sink"),
                  {}};
    g.starts = {check_source(g.a, 0, kPeriodA, 60), check_source(g.b, 1, kPeriodB, 24)};
    expect_edge(g.a.json, g.fusion.json, "a");
    expect_edge(g.b.json, g.fusion.json, "b");
    expect_edge(g.fusion.json, g.sink.json, "f");
    return g;
  }

  std::string run_, out_;
};

// The merge of --on any, rebuilt from the fusion's arrivals: each arrival activates it
// once, with the message that came and the newest of the other input.
std::vector<OriginSet> expected_any(const std::vector<Arrival> &arrivals,
                                    const std::vector<std::map<uint64_t, int64_t>> &starts) {
  std::vector<OriginSet> out;
  OriginSet latest;
  for (const Arrival &a : arrivals) {
    const int64_t t = starts[a.input].at(a.seq);
    latest[a.input] = {a.seq, t, t};
    out.push_back(latest);
  }
  return out;
}

// The merge of --on all: an activation once each input has a message not used yet, with
// the newest of each.
std::vector<OriginSet> expected_all(const std::vector<Arrival> &arrivals,
                                    const std::vector<std::map<uint64_t, int64_t>> &starts) {
  std::vector<OriginSet> out;
  OriginSet latest;
  bool fresh[2] = {false, false};
  for (const Arrival &a : arrivals) {
    const int64_t t = starts[a.input].at(a.seq);
    latest[a.input] = {a.seq, t, t};
    fresh[a.input] = true;
    if (fresh[0] && fresh[1]) {
      out.push_back(latest);
      fresh[0] = fresh[1] = false;
    }
  }
  return out;
}

std::vector<OriginSet> in_order(const std::map<uint64_t, OriginSet> &m) {
  std::vector<OriginSet> out;
  for (auto &[a, set] : m) out.push_back(set);
  return out;
}

// Received + lost = sent on one edge, nothing duplicated or corrupted, the end marker seen.
void expect_edge(const std::string &writer_json, const std::string &reader_json,
                 const std::string &topic) {
  const std::string in = "\"topic\": \"" + topic + "\", \"received\"";
  const std::string out = "\"topic\": \"" + topic + "\", \"sent\"";
  const int64_t sent = number_after(writer_json, out, "sent");
  EXPECT_GT(sent, 0) << writer_json;
  EXPECT_EQ(number_after(reader_json, in, "received") + number_after(reader_json, in, "lost"), sent)
      << reader_json;
  EXPECT_EQ(number_after(reader_json, in, "lost"), 0) << "loopback at 100 Hz loses nothing";
  EXPECT_EQ(number_after(reader_json, in, "duplicated"), 0);
  EXPECT_EQ(number_after(reader_json, in, "corrupted"), 0);
  EXPECT_EQ(number_after(reader_json, in, "seen"), 1);
}

}  // namespace

// udp, wait: two sources -> fusion on any input (two inputs: a receiver thread each) ->
// a sink on its own 5 ms timer (one input: take() on the role thread).
TEST_F(ModuleGraph, FusionOnAnyThenTimerSinkThroughUdp) {
  auto [a, b, fusion, sink, starts] =
      run_fusion_graph("udp", "wait", "any", {"timer", "--period", "5000000"});
  for (auto *f : {&fusion, &sink})
    EXPECT_NE(f->json.find("\"ended_by\": \"end_marker\""), std::string::npos) << f->json;

  // any: one activation per arrival, each merging what the arrivals say.
  ASSERT_EQ(fusion.activations.size(), fusion.arrivals.size());
  EXPECT_EQ(fusion.arrivals.size(), 84u);
  for (size_t n = 0; n < fusion.activations.size(); ++n) {
    EXPECT_EQ(fusion.activations[n].trigger, fusion.arrivals[n].input);
    EXPECT_EQ(fusion.activations[n].scheduled_ns, fusion.arrivals[n].arrival_ns);
  }
  EXPECT_EQ(in_order(by_activation(fusion.origins)), expected_any(fusion.arrivals, starts));
  check_origins_travelled(fusion, starts);

  // The timer sink: on its ticks exactly, each activation with the origins of the
  // newest message taken before it began (taken on the same thread, so in time order).
  check_origins_travelled(sink, starts);
  auto fused = by_activation(fusion.origins);
  auto at_sink = by_activation(sink.origins);
  size_t next = 0;
  const Arrival *newest = nullptr;
  for (size_t k = 0; k < sink.activations.size(); ++k) {
    const Activation &act = sink.activations[k];
    EXPECT_EQ(act.trigger, kTimer);
    EXPECT_EQ(act.scheduled_ns - sink.activations[0].scheduled_ns, int64_t(k) * 5'000'000);
    while (next < sink.arrivals.size() && sink.arrivals[next].arrival_ns < act.start_ns)
      newest = &sink.arrivals[next++];
    if (newest == nullptr) {
      EXPECT_EQ(at_sink.count(act.activation), 0u);  // nothing yet: no origin
      continue;
    }
    EXPECT_EQ(at_sink[act.activation], fused[newest->seq]) << "sink activation " << k;
  }
}

// shm, listener: fusion on all inputs, sink on any; the sink's origins are exactly those
// of the fusion activation whose message activated it.
TEST_F(ModuleGraph, FusionOnAllThenSinkOnAnyThroughShm) {
  auto [a, b, fusion, sink, starts] = run_fusion_graph("shm", "listener", "all", {"any"});

  const std::vector<OriginSet> expected = expected_all(fusion.arrivals, starts);
  EXPECT_GE(expected.size(), 20u);  // about one per message of the slower source
  EXPECT_EQ(in_order(by_activation(fusion.origins)), expected);
  EXPECT_EQ(fusion.activations.size(), expected.size());
  EXPECT_EQ(number_after(fusion.json, "\"counts\"", "activations"), int64_t(expected.size()));
  check_origins_travelled(sink, starts);

  auto fused = by_activation(fusion.origins);
  auto at_sink = by_activation(sink.origins);
  ASSERT_EQ(sink.activations.size(), sink.arrivals.size());
  EXPECT_EQ(sink.arrivals.size(), expected.size());
  for (size_t n = 0; n < sink.arrivals.size(); ++n) {
    EXPECT_EQ(sink.arrivals[n].writer, 2u);  // the fusion's module id
    EXPECT_EQ(at_sink[sink.activations[n].activation], fused[sink.arrivals[n].seq]) << n;
  }
}

// poll: a source's warm-up activations are flagged, and nothing derived from them is
// recorded downstream.
TEST_F(ModuleGraph, WarmupIsNotRecordedDownstream) {
  auto codes = run_graph("udp", "poll",
                         {{"sink", {"--module-id", "1", "--input", "a:1", "--warmup", "4"}},
                          {"srcA",
                           {"--module-id", "0", "--source-index", "0", "--period", "5000000",
                            "--count", "20", "--warmup", "4", "--output", "a:112:1"}}});
  EXPECT_EQ(codes[0], 0) << err("sink");
  EXPECT_EQ(codes[1], 0) << err("srcA");
  ModuleFiles a = read_module(out_, "srcA"), sink = read_module(out_, "sink");
  std::vector<std::map<uint64_t, int64_t>> starts = {check_source(a, 0, 5'000'000, 20, 4), {}};
  EXPECT_EQ(number_after(a.json, "\"counts\"", "warmup"), 4);
  EXPECT_EQ(number_after(sink.json, "\"topic\": \"a\", \"received\"", "received"), 20) << sink.json;
  EXPECT_EQ(number_after(sink.json, "\"topic\": \"a\", \"received\"", "warmup"), 4);
  EXPECT_EQ(number_after(sink.json, "\"counts\"", "warmup"), 4);  // its own activations
  EXPECT_EQ(sink.activations.size(), 20u);
  check_origins_travelled(sink, starts);
  for (const Origin &o : sink.origins) EXPECT_GE(o.newest_seq, 4u);
}

// An input whose writer never comes: --timeout ends the module, exit code 3, and its
// summary and (empty) records say so.
TEST_F(ModuleGraph, AnInputWhoseWriterNeverComesEndsAtTheTimeout) {
  std::vector<std::string> args = base("udp", "wait");
  args.back() = "1";  // --timeout 1
  for (const char *a : {"--module", "lonely", "--module-id", "1", "--input", "ghost:1"})
    args.push_back(a);
  Proc p = start(args, out_ + "/lonely.stderr");
  ASSERT_TRUE(ready(p)) << err("lonely");
  go(p);
  EXPECT_EQ(finish(p), 3) << err("lonely");
  ModuleFiles f = read_module(out_, "lonely");
  EXPECT_NE(f.json.find("\"ended_by\": \"timeout\""), std::string::npos) << f.json;
  EXPECT_NE(f.json.find("\"exit_code\": 3"), std::string::npos);
  EXPECT_EQ(number_after(f.json, "\"end_markers\": {\"expected\"", "seen"), 0) << f.json;
  EXPECT_EQ(number_after(f.json, "\"end_markers\": {\"expected\"", "expected"), 1);
  EXPECT_TRUE(f.activations.empty());
  EXPECT_TRUE(fs::exists(out_ + "/lonely.activations"));
}

// A source killed mid-run: its reader ends at --timeout (exit 3), and what it recorded
// until then still names the source's activations exactly.
TEST_F(ModuleGraph, AKilledSourceLeavesItsReaderToTheTimeout) {
  std::vector<std::string> sink_args = base("udp", "wait");
  sink_args.back() = "2";
  for (const char *a : {"--module", "sink", "--module-id", "1", "--input", "a:1"})
    sink_args.push_back(a);
  std::vector<std::string> src_args = base("udp", "wait");
  for (const char *a : {"--module", "srcA", "--module-id", "0", "--source-index", "0", "--period",
                        "5000000", "--count", "100000", "--output", "a:112:1"})
    src_args.push_back(a);
  Proc sink = start(sink_args, out_ + "/sink.stderr");
  Proc src = start(src_args, out_ + "/srcA.stderr");
  ASSERT_TRUE(ready(sink)) << err("sink");
  ASSERT_TRUE(ready(src)) << err("srcA");
  go(sink);
  go(src);
  usleep(300'000);
  kill(src.pid, SIGKILL);
  EXPECT_EQ(finish(src), 128 + SIGKILL);
  EXPECT_EQ(finish(sink), 3) << err("sink");
  ModuleFiles f = read_module(out_, "sink");
  EXPECT_NE(f.json.find("\"ended_by\": \"timeout\""), std::string::npos) << f.json;
  EXPECT_EQ(number_after(f.json, "\"end_markers\": {\"expected\"", "seen"), 0);
  EXPECT_GT(f.activations.size(), 5u);
  EXPECT_EQ(f.activations.size(), f.arrivals.size());
  for (size_t n = 0; n < f.origins.size(); ++n) {
    EXPECT_EQ(f.origins[n].newest_seq, f.arrivals[n].seq);  // each names the message it used
    EXPECT_EQ(f.origins[n].oldest_ns, f.origins[n].newest_ns);
  }
}

// A diamond (one source, two paths, one join on any input): the join merges two ages of
// the same source, newest_ns the larger and oldest_ns the smaller, exactly as the
// arrivals and the two paths' own records say. listener, udp; the slower path works 1-3 ms.
TEST_F(ModuleGraph, AJoinOfTwoPathsKeepsTheNewestAndTheOldest) {
  auto codes = run_graph(
      "udp", "listener",
      {{"join",
        {"--module-id", "3", "--input", "x:1", "--input", "y:1", "--on", "any", "--sources", "1"}},
       {"m1", {"--module-id", "1", "--input", "a1:1", "--output", "x:80:1", "--sources", "1"}},
       {"m2",
        {"--module-id", "2", "--input", "a2:1", "--output", "y:80:1", "--work", "1000000",
         "--work-max", "3000000", "--sources", "1"}},
       {"srcA",
        {"--module-id", "0", "--source-index", "0", "--period", "10000000", "--count", "40",
         "--output", "a1:80:1", "--output", "a2:80:1", "--sources", "1"}}});
  for (auto [i, name] : {std::pair{0, "join"}, {1, "m1"}, {2, "m2"}, {3, "srcA"}})
    EXPECT_EQ(codes[size_t(i)], 0) << name << ": " << err(name);
  ModuleFiles a = read_module(out_, "srcA"), m1 = read_module(out_, "m1"),
              m2 = read_module(out_, "m2"), join = read_module(out_, "join");
  std::vector<std::map<uint64_t, int64_t>> starts = {check_source(a, 0, kPeriodA, 40)};
  expect_edge(a.json, m1.json, "a1");
  expect_edge(a.json, m2.json, "a2");
  expect_edge(m1.json, join.json, "x");
  expect_edge(m2.json, join.json, "y");
  const std::map<uint64_t, OriginSet> path[2] = {by_activation(m1.origins),
                                                 by_activation(m2.origins)};
  ASSERT_EQ(join.activations.size(), 80u);
  ASSERT_EQ(join.arrivals.size(), 80u);
  auto merged = by_activation(join.origins);
  OriginSet latest[2];
  size_t mixed = 0;  // activations whose two paths brought different ages
  for (size_t n = 0; n < join.arrivals.size(); ++n) {
    const Arrival &arr = join.arrivals[n];
    latest[arr.input] = path[arr.input].at(arr.seq);
    auto [seq, newest, oldest] = latest[arr.input].at(0);
    if (!latest[1 - arr.input].empty()) {
      auto [seq2, newest2, oldest2] = latest[1 - arr.input].at(0);
      mixed += newest2 != newest;
      if (newest2 > newest) seq = seq2, newest = newest2;
      oldest = std::min(oldest, oldest2);
    }
    const OriginSet want = {{0u, {seq, newest, oldest}}};
    EXPECT_EQ(merged[join.activations[n].activation], want) << "join activation " << n;
  }
  check_origins_travelled(join, starts);
  EXPECT_GT(mixed, 0u) << "the test needs activations that merge two ages";
  EXPECT_NE(m2.json.find("\"work_ns\": 1000000, \"work_max_ns\": 3000000"), std::string::npos);
}
