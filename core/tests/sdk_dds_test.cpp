// psbench/sdk_dds.hpp: the DDS drivers' security options and files, option domain_id, a
// vendor configuration option and a domain per id, judged on configurations and folders
// made here.
#include "psbench/sdk_dds.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using psb::sdk::Options;
using psb::sdk::Refusals;

using Pairs = std::vector<std::pair<std::string, std::string>>;

// A psb_config of the given options (kept alive by the struct).
struct Config {
  explicit Config(Pairs given) : kv(std::move(given)) {
    for (auto &[k, v] : kv) options.push_back({k.c_str(), v.c_str()});
    cfg.run_id = "run1";
    cfg.options = options.data();
    cfg.option_count = options.size();
  }
  Pairs kv;
  std::vector<psb_option> options;
  psb_config cfg{};
};

std::vector<std::string> settings_of(const Refusals &r) {
  std::vector<std::string> out;
  for (const auto &refusal : r.all()) out.push_back(refusal.setting);
  return out;
}

TEST(SdkDds, TheDdsSecurityModesAreTakenAndOthersRefused) {
  Config ok(Pairs{{"security", "encrypt-submessage"}, {"security_dir", "/creds/"}});
  Refusals r;
  const psb::sdk::Security sec = psb::sdk::dds::security_options(Options(ok.cfg, r), r);
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(sec.on);
  EXPECT_EQ(sec.dir, "/creds");
  Config tls(Pairs{{"security", "tls"}, {"security_dir", "/creds"}});
  Refusals refused;
  EXPECT_FALSE(psb::sdk::dds::security_options(Options(tls.cfg, refused), refused).on);
  ASSERT_EQ(settings_of(refused), std::vector<std::string>{"option:security"});
  EXPECT_EQ(refused.all()[0].reason,
            "security=tls: not offered; the DDS Security modes are auth, access, encrypt, "
            "encrypt-payload and encrypt-submessage");
}

TEST(SdkDds, TheSecurityFilesAreRequiredOneByOne) {
  char dir[] = "/tmp/psbench_sdk_dds_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  psb::sdk::Security sec;
  sec.on = true, sec.mode = "auth", sec.dir = dir;
  const std::vector<std::string> files = {"ca.pem", "cert.pem", "key.pem", "governance.p7s",
                                          "permissions.p7s"};
  for (const std::string &name : files) {
    try {
      psb::sdk::dds::require_security_files(sec);
      ADD_FAILURE() << "no error without " << name;
    } catch (const psb::sdk::Error &e) {
      EXPECT_EQ(std::string(e.what()),
                "security=auth: " + std::string(dir) + "/" + name + " is missing or unreadable");
    }
    std::ofstream(sec.file(name.c_str())) << "x\n";
  }
  EXPECT_NO_THROW(psb::sdk::dds::require_security_files(sec));
  for (const std::string &name : files) unlink(sec.file(name.c_str()).c_str());
  rmdir(dir);
}

TEST(SdkDds, TheDomainIdComesFromTheRunIdUnlessGiven) {
  Config none(Pairs{}), given(Pairs{{"domain_id", "7"}}), bad(Pairs{{"domain_id", "231"}});
  Refusals r;
  EXPECT_EQ(psb::sdk::dds::domain_id(Options(none.cfg, r), "run1", 230),
            psb::sdk::id_in_range("run1", 1, 200));
  EXPECT_EQ(psb::sdk::dds::domain_id(Options(given.cfg, r), "run1", 230), 7u);
  EXPECT_TRUE(r.empty());
  psb::sdk::dds::domain_id(Options(bad.cfg, r), "run1", 230);
  EXPECT_EQ(settings_of(r), std::vector<std::string>{"option:domain_id"});
}

// The DDS standard's numbering: RETCODE_OK 0, OUT_OF_RESOURCES 5, ILLEGAL_OPERATION 12.
TEST(SdkDds, ReturnCodesAreNamedAsTheStandardNumbersThem) {
  EXPECT_STREQ(psb::sdk::dds::return_code_name(0), "OK");
  EXPECT_STREQ(psb::sdk::dds::return_code_name(5), "OUT_OF_RESOURCES");
  EXPECT_STREQ(psb::sdk::dds::return_code_name(12), "ILLEGAL_OPERATION");
  EXPECT_STREQ(psb::sdk::dds::return_code_name(13), "unknown");
  EXPECT_STREQ(psb::sdk::dds::return_code_name(-1), "unknown");
}

TEST(SdkDds, AVendorConfigurationNeedsTransportConfig) {
  Config c(Pairs{{"vendor_uri", "file:///x.xml"}});
  Refusals r;
  const Options options(c.cfg, r);
  EXPECT_STREQ(psb::sdk::dds::vendor_config(options, "vendor_uri", true), "file:///x.xml");
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(psb::sdk::dds::vendor_config(options, "vendor_uri", false), nullptr);
  ASSERT_EQ(settings_of(r), std::vector<std::string>{"option:vendor_uri"});
  EXPECT_EQ(r.all()[0].reason,
            "option vendor_uri is a vendor configuration; it needs --transport config (psbench "
            "then records transport 'config' instead of claiming one it did not choose)");
  Config absent(Pairs{});
  Refusals none;
  EXPECT_EQ(psb::sdk::dds::vendor_config(Options(absent.cfg, none), "vendor_uri", true), nullptr);
  EXPECT_TRUE(none.empty());
}

TEST(SdkDds, AHistoryIsSetOnlyWhenTheRunGivesOneAndKeepAllHasDepthOne) {
  EXPECT_FALSE(psb::sdk::dds::history({PSB_RELIABLE, PSB_VOLATILE, 0, 0}));
  const auto all = psb::sdk::dds::history({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_ALL, 0});
  ASSERT_TRUE(all);
  EXPECT_TRUE(all->keep_all);
  EXPECT_EQ(all->depth, 1);
  const auto last = psb::sdk::dds::history({PSB_RELIABLE, PSB_VOLATILE, PSB_KEEP_LAST, 40});
  ASSERT_TRUE(last);
  EXPECT_FALSE(last->keep_all);
  EXPECT_EQ(last->depth, 40);
}

TEST(SdkDds, TransientLocalNeedsReliableWithTheVendorsReason) {
  Refusals r;
  psb::sdk::dds::transient_local_needs_reliable({PSB_RELIABLE, PSB_TRANSIENT_LOCAL, 0, 0}, r, "x");
  psb::sdk::dds::transient_local_needs_reliable({PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0}, r, "x");
  EXPECT_TRUE(r.empty());
  psb::sdk::dds::transient_local_needs_reliable({PSB_BEST_EFFORT, PSB_TRANSIENT_LOCAL, 0, 0}, r,
                                                "the vendor's reason");
  ASSERT_EQ(settings_of(r), std::vector<std::string>{"durability"});
  EXPECT_EQ(r.all()[0].reason,
            "durability transient_local needs --reliability reliable: the vendor's reason");
}

struct Domain {
  explicit Domain(std::string c) : config(std::move(c)) {}
  const std::string config;
};

TEST(SdkDds, ADomainIsSharedWithItsConfigurationAndRefusedWithAnother) {
  psb::sdk::PerProcess<uint32_t, Domain> domains;
  int made = 0;
  auto make = [&](const char *config) {
    return [&made, config] {
      ++made;
      return std::make_unique<Domain>(config);
    };
  };
  auto a = psb::sdk::dds::join_domain(domains, 5, "A", make("A"));
  auto b = psb::sdk::dds::join_domain(domains, 5, "A", make("A"));
  EXPECT_EQ(made, 1);
  EXPECT_EQ(&*a, &*b);
  try {
    psb::sdk::dds::join_domain(domains, 5, "B", make("B"));
    FAIL() << "no error";
  } catch (const psb::sdk::Error &e) {
    EXPECT_STREQ(e.what(),
                 "domain 5 is already open in this process with another configuration; give "
                 "each configuration its own domain_id=N");
  }
  EXPECT_EQ(domains.users(5), 2);
  auto other = psb::sdk::dds::join_domain(domains, 6, "B", make("B"));
  EXPECT_EQ(made, 2);
}

// A type of its own: the process's registry of it starts empty.
struct OwnDomain {
  OwnDomain(uint32_t id, std::string c) : id(id), config(std::move(c)) {}
  const uint32_t id;
  const std::string config;
};

TEST(SdkDds, TheProcessRegistryMakesADomainFromItsIdAndConfigurationAndLetsItGoWithItsLastUser) {
  {
    auto a = psb::sdk::dds::join_domain<OwnDomain>(9, "A");
    auto b = psb::sdk::dds::join_domain<OwnDomain>(9, "A");
    EXPECT_EQ(&*a, &*b);
    EXPECT_EQ(a->id, 9u);
    EXPECT_EQ(a->config, "A");
    EXPECT_THROW(psb::sdk::dds::join_domain<OwnDomain>(9, "B"), psb::sdk::Error);
  }
  int made = 0;
  auto again = psb::sdk::dds::join_domain<OwnDomain>(9, "B", [&] {
    ++made;
    return std::make_unique<OwnDomain>(9, "B");
  });
  EXPECT_EQ(made, 1);  // "B" is not refused: the "A" domain went with its last lease
  EXPECT_EQ(again->config, "B");
}

}  // namespace
