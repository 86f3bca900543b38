#include "config.hpp"

#include <gtest/gtest.h>
#include <psbench/driver.h>

#include <string>
#include <vector>

#include "driver_loader.hpp"

using namespace psb;

namespace {

NodeConfig parse(std::vector<const char *> args) {
  args.insert(args.begin(), "psbench-node");
  return parse_args(int(args.size()), args.data());
}

std::string error_of(std::vector<const char *> args) {
  try {
    parse(args);
  } catch (const UsageError &e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, DefaultsAreClosedLoopBestEffortVolatileWait) {
  auto c = parse({"--driver", "x.so", "--role", "ping", "--out", "/tmp/x"});
  EXPECT_TRUE(c.closed_loop());
  EXPECT_EQ(c.reliability, PSB_BEST_EFFORT);
  EXPECT_EQ(c.durability, PSB_VOLATILE);
  EXPECT_EQ(c.history, 0u);  // the driver's default
  EXPECT_EQ(c.notify, PSB_NOTIFY_WAIT);
  EXPECT_EQ(*c.count, 10000u);
  EXPECT_EQ(c.warmup_for(Role::ping), 1000u);
  EXPECT_EQ(c.warmup_for(Role::pub), 1000u);  // the same as ping's
  EXPECT_EQ(c.warmup_for(Role::sub), 0u);
  EXPECT_EQ(c.run_id.size(), 10u);
}

TEST(Config, TwoRolesMeanIntraProcess) {
  auto c = parse({"--driver", "x.so", "--role", "ping,pong", "--out", "/tmp/x"});
  EXPECT_TRUE(c.intra_process());
  ASSERT_EQ(c.roles.size(), 2u);
  EXPECT_EQ(c.roles[1], Role::pong);
}

TEST(Config, ParsesQosOptionsAndRealtime) {
  auto c =
      parse({"--driver",      "x.so",     "--role",    "pub",         "--out",    "/tmp/x",
             "--reliability", "reliable", "--history", "keep_last:8", "--option", "profile=a=b.xml",
             "--cpu",         "pub=1",    "--fifo",    "80",          "--rate",   "1000",
             "--duration",    "2"});
  EXPECT_EQ(c.reliability, PSB_RELIABLE);
  EXPECT_EQ(c.history, PSB_KEEP_LAST);
  EXPECT_EQ(c.history_depth, 8u);
  ASSERT_EQ(c.options.size(), 1u);
  EXPECT_EQ(c.options[0].first, "profile");
  EXPECT_EQ(c.options[0].second, "a=b.xml");  // values pass through untouched
  EXPECT_EQ(c.cpu.at(Role::pub), 1);
  EXPECT_EQ(c.fifo_priority, 80);
  EXPECT_FALSE(c.count.has_value());
  EXPECT_EQ(c.sample_capacity(), 2001u);
}

TEST(Config, BadArgumentsNameTheArgument) {
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--size", "abc"})
                .find("--size"),
            std::string::npos);
  EXPECT_NE(
      error_of({"--driver", "x.so", "--role", "pnig", "--out", "o"}).find("ping|pong|pub|sub"),
      std::string::npos);
  EXPECT_NE(
      error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--size", "16"}).find("32"),
      std::string::npos);
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--count", "5",
                      "--duration", "1"})
                .find("one, not both"),
            std::string::npos);
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--notify", "spin"})
                .find("--notify"),
            std::string::npos);
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--cpu", "pong=1"})
                .find("--cpu"),
            std::string::npos);
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--history", "keep_last"})
                .find("keep_last:16"),
            std::string::npos);
  EXPECT_NE(error_of({"--driver", "x.so", "--role", "ping"}).find("--out"), std::string::npos);
  EXPECT_NE(
      error_of({"--driver", "x.so", "--role", "ping", "--out", "o", "--bogus"}).find("--bogus"),
      std::string::npos);
}

TEST(Config, AcceptsTheLargestAndSmallestSizes) {
  EXPECT_EQ(parse({"--driver", "x", "--role", "sub", "--out", "o", "--size", "32"}).size, 32u);
  EXPECT_EQ(parse({"--driver", "x", "--role", "sub", "--out", "o", "--size", "4194304"}).size,
            4194304u);
  EXPECT_NE(error_of({"--driver", "x", "--role", "sub", "--out", "o", "--size", "4194305"}), "");
}

TEST(Config, PublishersWriterIdTopicEchoDefaultsAndParse) {
  auto d = parse({"--driver", "x", "--role", "sub", "--out", "o"});
  EXPECT_EQ(d.publishers, 1u);
  EXPECT_EQ(d.writer_id, 0u);
  EXPECT_EQ(d.topic, "data");
  EXPECT_EQ(d.echo_every, 0u);
  auto c = parse({"--driver", "x", "--role", "pub", "--out", "o", "--publishers", "3",
                  "--writer-id", "2", "--topic", "data_2", "--echo-every", "100"});
  EXPECT_EQ(c.publishers, 3u);
  EXPECT_EQ(c.writer_id, 2u);
  EXPECT_EQ(c.topic, "data_2");
  EXPECT_EQ(c.echo_every, 100u);
  EXPECT_EQ(c.echo_capacity(), c.sample_capacity());  // every echo is kept
}

TEST(Config, PublishersWriterIdTopicEchoErrorsNameTheArgumentAndTheFix) {
  auto err = [](std::vector<const char *> extra, const char *role = "pub") {
    std::vector<const char *> a = {"--driver", "x", "--role", role, "--out", "o"};
    a.insert(a.end(), extra.begin(), extra.end());
    return error_of(a);
  };
  EXPECT_NE(err({"--publishers", "0"}).find("--publishers: must be at least 1"), std::string::npos);
  EXPECT_NE(err({"--publishers", "x"}).find("--publishers"), std::string::npos);
  std::string r = err({"--publishers", "2", "--writer-id", "2"});
  EXPECT_NE(r.find("--writer-id"), std::string::npos) << r;
  EXPECT_NE(r.find("0..1"), std::string::npos) << r;
  EXPECT_NE(err({"--writer-id", "1"}).find("--publishers 1"), std::string::npos);
  EXPECT_NE(err({"--publishers", "2", "--writer-id", "1"}, "sub").find("--role pub"),
            std::string::npos);
  EXPECT_NE(err({"--topic", "a-b"}).find("--topic"), std::string::npos);
  EXPECT_NE(err({"--topic", ""}).find("--topic"), std::string::npos);
  EXPECT_NE(err({"--topic", "x"}, "ping").find("ping and pong"), std::string::npos);
  EXPECT_NE(err({"--echo-every", "0"}).find("--echo-every: must be at least 1"), std::string::npos);
  EXPECT_NE(err({"--echo-every", "10"}, "ping,pong").find("--echo-every"), std::string::npos);
  EXPECT_EQ(err({"--echo-every", "10"}, "pub,sub"), "");
}

TEST(Config, ReplySizeIsAnAcknowledgementOfPingAndPong) {
  auto d = parse({"--driver", "x", "--role", "pong", "--out", "o"});
  EXPECT_EQ(d.reply_size, 0u);
  EXPECT_EQ(d.reply_length(1024), 1024u);  // default: the whole message comes back
  auto c = parse(
      {"--driver", "x", "--role", "ping", "--out", "o", "--size", "1024", "--reply-size", "32"});
  EXPECT_EQ(c.reply_size, 32u);
  EXPECT_EQ(c.reply_length(c.size), 32u);
  EXPECT_EQ(c.reply_length(32), 32u);
  auto big = parse({"--driver", "x", "--role", "ping,pong", "--out", "o", "--size", "64",
                    "--reply-size", "100"});
  EXPECT_EQ(big.reply_length(big.size), 64u);  // never longer than what was taken
  auto err = [](std::vector<const char *> extra, const char *role = "pong") {
    std::vector<const char *> a = {"--driver", "x", "--role", role, "--out", "o"};
    a.insert(a.end(), extra.begin(), extra.end());
    return error_of(a);
  };
  EXPECT_NE(err({"--reply-size", "31"}).find("--reply-size: 31 is out of range; use 32"),
            std::string::npos);
  EXPECT_NE(err({"--reply-size", "0"}).find("--reply-size"), std::string::npos);
  EXPECT_NE(err({"--reply-size", "x"}).find("--reply-size"), std::string::npos);
  EXPECT_NE(err({"--reply-size", "32"}, "pub").find("ping and pong"), std::string::npos);
  EXPECT_EQ(err({"--reply-size", "32"}, "ping"), "");
}

TEST(Config, LatencyFromIsTheSubsChoiceOfTimeBase) {
  auto d = parse({"--driver", "x", "--role", "sub", "--out", "o"});
  EXPECT_FALSE(d.latency_from_send);  // default: the publisher's schedule
  auto c = parse({"--driver", "x", "--role", "sub", "--out", "o", "--latency-from", "send"});
  EXPECT_TRUE(c.latency_from_send);
  auto i = parse({"--driver", "x", "--role", "pub,sub", "--out", "o", "--latency-from", "send"});
  EXPECT_TRUE(i.latency_from_send);
  auto back = parse({"--driver", "x", "--role", "sub", "--out", "o", "--latency-from", "send",
                     "--latency-from", "intended"});
  EXPECT_FALSE(back.latency_from_send);
  auto err = [](const char *value, const char *role) {
    return error_of({"--driver", "x", "--role", role, "--out", "o", "--latency-from", value});
  };
  EXPECT_NE(err("write", "sub").find("--latency-from: 'write' is not one of intended|send"),
            std::string::npos);
  EXPECT_NE(err("send", "pub").find("--latency-from: the sub's one-way latency"),
            std::string::npos);
  EXPECT_NE(err("send", "ping").find("--latency-from"), std::string::npos);
}

TEST(Config, RelayTakesATopicAndRefusesEchoEvery) {
  auto c = parse({"--driver", "x", "--role", "relay", "--out", "o", "--topic", "data2"});
  ASSERT_EQ(c.roles.size(), 1u);
  EXPECT_EQ(c.roles[0], Role::relay);
  EXPECT_EQ(c.topic, "data2");
  EXPECT_STREQ(role_name(Role::relay), "relay");
  auto s = parse({"--driver", "x", "--role", "sub", "--out", "o", "--topic", "data_relay"});
  EXPECT_EQ(s.topic, "data_relay");
  std::string r =
      error_of({"--driver", "x", "--role", "relay", "--out", "o", "--echo-every", "10"});
  EXPECT_NE(r.find("--echo-every: not with --role relay"), std::string::npos) << r;
  r = error_of({"--driver", "x", "--role", "relai", "--out", "o"});
  EXPECT_NE(r.find("ping|pong|pub|sub|relay"), std::string::npos) << r;
}

TEST(Config, AddressAndPeersPlaceTheNodeOnTheRunsNetwork) {
  const std::vector<const char *> base = {"--driver", "x", "--role", "ping", "--out", "o"};
  auto with = [&](std::vector<const char *> extra) {
    std::vector<const char *> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const NodeConfig one = parse(base);
  EXPECT_TRUE(one.address.empty());
  EXPECT_TRUE(one.peers.empty());
  const NodeConfig c =
      parse(with({"--address", "198.18.0.1", "--peer", "198.18.0.2", "--peer", "198.18.0.3"}));
  EXPECT_EQ(c.address, "198.18.0.1");
  EXPECT_EQ(c.peers, (std::vector<std::string>{"198.18.0.2", "198.18.0.3"}));
  EXPECT_EQ(error_of(with({"--address", "198.18.0"})),
            "--address: '198.18.0' is not an IPv4 address, e.g. 198.18.0.2");
  EXPECT_EQ(error_of(with({"--peer", "198.18.0.2"})), "--peer: give this node's own --address too");
  std::vector<const char *> intra = {"--driver", "x", "--role",    "ping,pong",
                                     "--out",    "o", "--address", "198.18.0.1"};
  EXPECT_EQ(error_of(intra), "--address: roles in one process are on one host; leave it out");
}

TEST(Config, RunTopicsListEveryTopicOfTheRunOnce) {
  EXPECT_TRUE(parse({"--driver", "x", "--role", "sub", "--out", "o"}).run_topics.empty());
  const NodeConfig c =
      parse({"--driver", "x", "--role", "pub", "--out", "o", "--topic", "data2", "--echo-every",
             "10", "--run-topics", "data1,data2,data1_echo,data2_echo"});
  EXPECT_EQ(c.run_topics, (std::vector<std::string>{"data1", "data2", "data1_echo", "data2_echo"}));
  EXPECT_EQ(c.own_topics(), (std::vector<std::string>{"data2", "data2_echo"}));
  EXPECT_EQ(parse({"--driver", "x", "--role", "relay", "--out", "o"}).own_topics(),
            (std::vector<std::string>{"data", "data_relay"}));
  EXPECT_EQ(parse({"--driver", "x", "--role", "ping,pong", "--out", "o"}).own_topics(),
            (std::vector<std::string>{"ping", "pong"}));

  auto error_with = [](const char *topics, const char *role = "sub") {
    return error_of({"--driver", "x", "--role", role, "--out", "o", "--run-topics", topics});
  };
  EXPECT_EQ(error_with("data,,x"),
            "--run-topics: '' is not a topic name of letters, digits and '_'; give "
            "SUFFIX,SUFFIX,... e.g. scan,pose");
  EXPECT_NE(error_with("data,a-b").find("--run-topics: 'a-b' is not a topic name"),
            std::string::npos);
  EXPECT_EQ(error_with("data,x,data"),
            "--run-topics: 'data' is listed twice; list each topic once");
  // A topic of this node missing from the list would have no port of its own.
  EXPECT_EQ(error_with("ping", "ping"),
            "--run-topics: topic 'pong' of this node is not among them; list every topic of "
            "the run, the same list for every node");
  EXPECT_EQ(error_of({"--driver", "x", "--role", "sub", "--out", "o", "--run-topics"}),
            "--run-topics: needs a value");
}

TEST(Config, RunTopicsReachTheDriverAsFullNamesInTheirOrder) {
  const psb_capabilities caps{};
  const NodeConfig without = parse({"--driver", "x", "--role", "sub", "--out", "o"});
  const DriverConfig none(without, caps);
  EXPECT_EQ(none.get().run_topics, nullptr);
  EXPECT_EQ(none.get().run_topic_count, 0u);

  const NodeConfig node = parse({"--driver", "x", "--role", "sub", "--out", "o", "--run-id", "r1",
                                 "--topic", "scan", "--run-topics", "pose,scan,map"});
  const DriverConfig cfg(node, caps);
  ASSERT_EQ(cfg.get().run_topic_count, 3u);
  std::vector<std::string> names(cfg.get().run_topics, cfg.get().run_topics + 3);
  EXPECT_EQ(names, (std::vector<std::string>{"psb_r1_pose", "psb_r1_scan", "psb_r1_map"}));
}
