// Refusal of settings a driver cannot honour, through the real udp baseline driver.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config.hpp"
#include "driver_loader.hpp"
#include "refusals.hpp"
#include "run_node.hpp"

using namespace psb;

namespace {

const std::string kUdp = std::string(PSBENCH_DRIVER_DIR) + "/udp/libpsbench-udp.so";

const std::string kShm = std::string(PSBENCH_DRIVER_DIR) + "/shm/libpsbench-shm.so";

// A node invoked with args against udp (or another driver) in a role: its command line
// parsed and its driver loaded and configured, as the node does before it checks.
class Invocation {
 public:
  explicit Invocation(std::vector<const char *> args, const std::string &lib = kUdp,
                      const char *role = "ping")
      : node(parse(std::move(args), lib, role)),
        driver(node.driver_path),
        cfg(node, driver.table().caps) {}

  // The node's refusal of this invocation (refuse_unsupported's message); "" when
  // accepted.
  std::string refused() {
    try {
      refuse_unsupported(driver, node, cfg.get());
    } catch (const RefusedError &e) {
      return e.what();
    }
    return "";
  }

  NodeConfig node;
  LoadedDriver driver;
  DriverConfig cfg;

 private:
  static NodeConfig parse(std::vector<const char *> args, const std::string &lib,
                          const char *role) {
    std::vector<const char *> argv = {"psbench-node", "--driver", lib.c_str(), "--role",
                                      role,           "--out",    "/tmp/x"};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_args(int(argv.size()), argv.data());
  }
};

// The refusal message for a node invoked with args against udp (or another driver); ""
// when accepted.
std::string refusal(std::vector<const char *> args, const std::string &lib = kUdp) {
  return Invocation(std::move(args), lib).refused();
}

}  // namespace

TEST(Capabilities, DefaultsAreAccepted) { EXPECT_EQ(refusal({}), ""); }

TEST(Capabilities, UnsupportedQosIsRefusedNamingTheSettingAndWhatIsSupported) {
  std::string r = refusal({"--reliability", "reliable"});
  EXPECT_NE(r.find("reliability 'reliable' is not supported"), std::string::npos) << r;
  EXPECT_NE(r.find("best_effort"), std::string::npos) << r;
  EXPECT_NE(refusal({"--durability", "transient_local"}).find("durability"), std::string::npos);
  EXPECT_NE(refusal({"--history", "keep_last:4"}).find("history"), std::string::npos);
}

TEST(Capabilities, UnknownTransportAndOptionAreRefused) {
  EXPECT_NE(refusal({"--transport", "shm"}).find("transport 'shm'"), std::string::npos);
  std::string r = refusal({"--option", "colour=blue"});
  EXPECT_NE(r.find("option 'colour'"), std::string::npos) << r;
  EXPECT_NE(r.find("port_base"), std::string::npos) << r;  // lists what it takes
}

TEST(Capabilities, DriverCheckRefusesWhatOnlyItCanJudge) {
  std::string r = refusal({"--transport", "unicast"});
  EXPECT_NE(r.find("peer="), std::string::npos) << r;
  EXPECT_NE(refusal({"--option", "port_base=80"}).find("port_base"), std::string::npos);
  EXPECT_EQ(refusal({"--transport", "unicast", "--option", "peer=127.0.0.1"}), "");
}

TEST(Capabilities, ARunAcrossHostsIsRefusedByADriverOnOneHost) {
  EXPECT_EQ(refusal({}, kShm), "");
  const std::string r = refusal({"--address", "198.18.0.1", "--peer", "198.18.0.2"}, kShm);
  EXPECT_NE(r.find("shm: a run across hosts is not supported; this driver runs on one host"),
            std::string::npos)
      << r;
}

TEST(Capabilities, LoanIsRefusedWhenTheDriverHasNone) {
  EXPECT_NE(refusal({"--loan"}).find("--loan"), std::string::npos);
}

TEST(Capabilities, DefaultTransportResolvesToTheDriversFirst) {
  EXPECT_EQ(Invocation({}).cfg.transport(), "loopback");
}

TEST(Capabilities, DescribeReportsTheDriver) {
  LoadedDriver driver(kUdp);
  std::string json = describe_json(driver);
  EXPECT_NE(json.find("\"name\": \"udp\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"reliability\": [\"best_effort\"]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_payload\": 4194304"), std::string::npos) << json;
}

TEST(Capabilities, ALibraryThatIsNotADriverIsRefused) {
  try {
    LoadedDriver driver("libc.so.6");
    FAIL() << "libc was accepted as a driver";
  } catch (const RefusedError &e) {
    EXPECT_NE(std::string(e.what()).find("psb_driver_entry"), std::string::npos);
  }
}

TEST(Capabilities, PublishersAboveWritersPerTopicAreRefused) {
  // udp takes several senders on one port; shm has one writer per ring.
  EXPECT_EQ(refusal({"--publishers", "3"}), "");
  Invocation run({"--publishers", "2"}, kShm, "sub");
  const std::string r = run.refused();
  EXPECT_NE(r.find("--publishers 2 is not supported"), std::string::npos) << r;
  EXPECT_NE(r.find("at most 1 writer(s) per topic"), std::string::npos) << r;
  EXPECT_NE(describe_json(run.driver).find("\"writers_per_topic\": 1"), std::string::npos);
}

TEST(Capabilities, EveryRefusalIsListedWithTheSettingItConcerns) {
  // Three settings udp cannot honour and one unknown option: all four, in one answer.
  Invocation run({"--reliability", "reliable", "--notify", "listener", "--transport",
                  "carrier_pigeon", "--option", "colour=blue"});
  std::vector<std::string> settings;
  for (const Refusal &r : refusals(run.driver, run.node, run.cfg.get()))
    settings.push_back(r.setting);
  const bool listener_ok = run.driver.table().caps.notify & PSB_NOTIFY_LISTENER;
  std::vector<std::string> expected = {"reliability"};
  if (!listener_ok) expected.push_back("notify");
  expected.insert(expected.end(), {"transport", "option:colour"});
  EXPECT_EQ(settings, expected);
  // The run's refusal names every one of them.
  const std::string r = run.refused();
  EXPECT_NE(r.find("reliability 'reliable'"), std::string::npos) << r;
  EXPECT_NE(r.find("transport 'carrier_pigeon'"), std::string::npos) << r;
  EXPECT_NE(r.find("option 'colour'"), std::string::npos) << r;
}

TEST(Capabilities, EveryRefusalOfTheDriversCheckIsListedBesideTheNodesOwn) {
  // udp's check() refuses reliable (as the node does from its capabilities: its reason is
  // appended to the node's message), a port_base out of range and unicast without a peer:
  // each a refusal of its own setting, none hidden behind the first.
  Invocation run(
      {"--reliability", "reliable", "--transport", "unicast", "--option", "port_base=80"});
  const std::vector<Refusal> found = refusals(run.driver, run.node, run.cfg.get());
  std::vector<std::string> settings;
  for (const Refusal &r : found) settings.push_back(r.setting);
  EXPECT_EQ(settings, (std::vector<std::string>{"reliability", "option:port_base", "option:peer"}));
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].message,
            "udp: reliability 'reliable' is not supported; this driver supports best_effort "
            "(reliability must be best_effort: the kernel neither acknowledges nor resends)");
  EXPECT_EQ(found[1].message, "udp: option port_base='80': use a number from 1024 to 52767");
  EXPECT_EQ(found[2].message,
            "udp: transport 'unicast' needs option peer=<IPv4 address the writer sends to>");
}

TEST(Capabilities, CheckAndARefusedRunListEveryRefusal) {
  const std::string args = "--driver " + kUdp +
                           " --role ping --reliability reliable --transport unicast "
                           "--option port_base=80";
  const psb_test::NodeOutcome check = psb_test::run_node(args + " --check");
  EXPECT_EQ(check.exit_code, 2) << check.output;
  for (const char *line : {"refused (reliability): udp: reliability 'reliable' is not supported",
                           "refused (option:port_base): udp: option port_base='80'",
                           "refused (option:peer): udp: transport 'unicast' needs option peer="})
    EXPECT_NE(check.output.find(line), std::string::npos) << line << " not in:\n" << check.output;
  const psb_test::NodeOutcome run =
      psb_test::run_node(args + " --out /nonexistent/psbench-refused");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find(
                "the kernel neither acknowledges nor resends); udp: option port_base='80': "
                "use a number from 1024 to 52767; udp: transport 'unicast' needs option peer="),
            std::string::npos)
      << run.output;
}
