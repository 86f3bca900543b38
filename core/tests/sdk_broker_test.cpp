// psbench/sdk_broker.hpp: option broker=HOST:PORT of a broker client, required.
#include "psbench/sdk_broker.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using psb::sdk::BrokerAddress;
using psb::sdk::Options;
using psb::sdk::Refusals;

// A config whose only option is broker=value (none when value is nullptr).
struct BrokerRun {
  explicit BrokerRun(const char *value) {
    if (value != nullptr) option = {"broker", value};
    cfg.options = &option;
    cfg.option_count = value != nullptr ? 1 : 0;
  }
  psb_option option{};
  psb_config cfg{};
};

TEST(SdkBroker, ReadsHostAndPortAsGiven) {
  BrokerRun run("[::1]:5672");
  Refusals refuse;
  BrokerAddress out;
  EXPECT_TRUE(psb::sdk::broker_option(Options(run.cfg, refuse), refuse, 5672, "rabbitmq-server",
                                      "broker", out));
  EXPECT_TRUE(refuse.empty());
  EXPECT_EQ(out.text, "[::1]:5672");
  EXPECT_EQ(out.host, "::1");
  EXPECT_EQ(out.port, 5672);
}

TEST(SdkBroker, MissingIsRefusedNamingWhoSetsIt) {
  BrokerRun run(nullptr);
  Refusals refuse;
  BrokerAddress out{"kept", "kept", 7};
  EXPECT_FALSE(
      psb::sdk::broker_option(Options(run.cfg, refuse), refuse, 1883, "mosquitto", "broker", out));
  ASSERT_EQ(refuse.size(), 1u);
  EXPECT_EQ(refuse.all()[0].setting, "option:broker");
  EXPECT_EQ(refuse.all()[0].reason,
            "option broker=HOST:PORT is missing; psbench sets it when it starts mosquitto, or "
            "give the address of your own broker");
  EXPECT_EQ(out.port, 7);
}

TEST(SdkBroker, MalformedIsRefusedWithAnExampleOnTheUsualPort) {
  BrokerRun run("localhost");
  Refusals refuse;
  BrokerAddress out{"kept", "kept", 7};
  EXPECT_FALSE(psb::sdk::broker_option(Options(run.cfg, refuse), refuse, 5672, "rabbitmq-server",
                                       "broker", out));
  ASSERT_EQ(refuse.size(), 1u);
  EXPECT_EQ(refuse.all()[0].setting, "option:broker");
  EXPECT_NE(refuse.all()[0].reason.find("e.g. 127.0.0.1:5672"), std::string::npos);
  EXPECT_EQ(out.host, "kept");
}

}  // namespace
