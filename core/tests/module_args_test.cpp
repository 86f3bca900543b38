// --role module's arguments: a bad one exits 2 with one message naming it and the fix,
// before anything is created, and --check says the same (setting "arguments"); a
// driver that cannot carry a module's topics refuses it.
#include <gtest/gtest.h>

#include <string>

#include "run_node.hpp"

using psb_test::run_node;

namespace {

const std::string kUdp = std::string(PSBENCH_DRIVER_DIR) + "/udp/libpsbench-udp.so";
const std::string kShm = std::string(PSBENCH_DRIVER_DIR) + "/shm/libpsbench-shm.so";

// A valid fusion module (two inputs, one output) with extra arguments.
std::string fusion(const std::string &extra, const std::string &lib = kUdp) {
  return "--driver " + lib +
         " --role module --out /tmp/psb-module-args-never --module fusion --module-id 2"
         " --sources 2 --size 160 --input a:1 --input b:1 --on any " +
         extra;
}

void expect_refused(const std::string &args, const std::string &says) {
  auto o = run_node(args);
  EXPECT_EQ(o.exit_code, 2) << args << "\n" << o.output;
  EXPECT_NE(o.output.find(says), std::string::npos) << args << "\n" << o.output;
}

}  // namespace

TEST(ModuleArgs, BadArgumentsExit2NamingTheArgumentAndTheFix) {
  expect_refused(fusion("--output f"), "--output: 'f' is not TOPIC:SIZE:READERS");
  expect_refused(fusion("--output f:40:1"), "--output: f: SIZE 40 cannot hold the origin table");
  expect_refused(fusion("--output f:200:1"), "SIZE 200 is over --size 160");
  expect_refused(fusion("--period 1000000"), "--period: with --on any");
  expect_refused(fusion("--source-index 0"), "--source-index: only a module without --input");
  expect_refused(fusion("--input a:1"), "topic 'a' is given twice");
  expect_refused(fusion("--input c:0"), "--input: c needs at least 1 writer");
  expect_refused(fusion("--on sometimes"), "--on: 'sometimes' is not one of timer|any|all");
  expect_refused(fusion("--work 10 --work-max 5"), "--work-max: 5 is below --work 10");
  expect_refused(fusion("--subscribers 2"), "--subscribers: not with --role module");
  expect_refused(
      "--driver " + kUdp + " --role module --out /tmp/x --module m --module-id 0 --sources 1",
      "--source-index: required for a source");
  expect_refused("--driver " + kUdp +
                     " --role module --out /tmp/x --module m --module-id 0 --sources 1"
                     " --source-index 0 --size 80",
                 "--period: a source");
  expect_refused("--driver " + kUdp +
                     " --role module --out /tmp/x --module m --module-id 0 --sources 2"
                     " --source-index 0 --period 1000",
                 "--size: required with --role module");
  expect_refused("--driver " + kUdp + " --role module --out /tmp/x --module-id 0 --sources 2",
                 "--module: required with --role module");
  expect_refused("--driver " + kUdp + " --role pub --out /tmp/x --period 10",
                 "--period: belongs to --role module");
  expect_refused("--driver " + kUdp + " --role module,sub --out /tmp/x",
                 "--role module: a module runs alone in its process");
}

TEST(ModuleArgs, HelpListsTheModuleArguments) {
  auto o = run_node("--help");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("--input TOPIC:WRITERS (repeat)  --output TOPIC:SIZE:READERS (repeat)"),
            std::string::npos)
      << o.output;
}

TEST(ModuleArgs, CheckJudgesTheModulesArguments) {
  auto ok = run_node(fusion("--output f:160:1 --check"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("accepted"), std::string::npos);
  auto bad = run_node(fusion("--output f:40:1 --check --json"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("{\"accepted\": false, \"refusals\": [{\"setting\": \"arguments\", "
                            "\"message\": \"--output: f: SIZE 40"),
            std::string::npos)
      << bad.output;
}

TEST(ModuleArgs, ADriverThatCannotCarryTheTopicsRefuses) {
  // shm: one reader per ring.
  auto shm = run_node(fusion("--output f:160:2 --check --json", kShm));
  EXPECT_EQ(shm.exit_code, 2);
  EXPECT_NE(shm.output.find("\"setting\": \"subscribers\", \"message\": \"shm: an --output with 2 "
                            "readers (TOPIC:SIZE:READERS) is not supported"),
            std::string::npos)
      << shm.output;
  auto shm_in = run_node(fusion("--input c:2 --check", kShm));
  EXPECT_EQ(shm_in.exit_code, 2);
  EXPECT_NE(shm_in.output.find("shm: an --input with 2 writers"), std::string::npos)
      << shm_in.output;
  // udp on loopback: one bound socket per topic; the driver's own check says why.
  auto udp = run_node(fusion("--output f:160:2"));
  EXPECT_EQ(udp.exit_code, 2);
  EXPECT_NE(udp.output.find("--transport multicast"), std::string::npos) << udp.output;
}

TEST(ModuleArgs, RunTopicsWithoutATopicOfTheModuleExit2NamingTheArgument) {
  const std::string missing = fusion("--run-topics a,f --output f:160:1");
  expect_refused(missing, "--run-topics: topic 'b' of this node is not among them");
  auto check = run_node(missing + " --check --json");
  EXPECT_EQ(check.exit_code, 2) << check.output;
  EXPECT_NE(check.output.find("\"setting\": \"arguments\""), std::string::npos) << check.output;
  expect_refused(fusion("--run-topics a,b,f,b --output f:160:1"),
                 "--run-topics: 'b' is listed twice");
  auto ok = run_node(fusion("--run-topics x,a,b,f --output f:160:1") + " --check");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}
