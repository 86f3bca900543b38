// psbench/sdk_dds_security.hpp: the DDS Security modes and the five files of security_dir.
#include "psbench/sdk_dds_security.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace {

using psb::sdk::Options;
using psb::sdk::Refusals;

struct SecurityRun {
  SecurityRun(const char *mode, const char *dir) {
    options[0] = {"security", mode};
    options[1] = {"security_dir", dir};
    cfg.options = options;
    cfg.option_count = 2;
  }
  psb_option options[2]{};
  psb_config cfg{};
};

TEST(SdkDdsSecurity, TakesTheFiveModesAndRefusesOthersNamingThem) {
  for (const char *mode : {"auth", "access", "encrypt", "encrypt-payload", "encrypt-submessage"}) {
    SecurityRun run(mode, "/a/folder/");
    Refusals refuse;
    const psb::sdk::Security sec = psb::sdk::dds_security_options(Options(run.cfg, refuse), refuse);
    EXPECT_TRUE(refuse.empty()) << mode;
    EXPECT_TRUE(sec.on) << mode;
    EXPECT_EQ(sec.mode, mode);
    EXPECT_EQ(sec.dir, "/a/folder");
  }
  SecurityRun run("tls", "/a/folder");
  Refusals refuse;
  EXPECT_FALSE(psb::sdk::dds_security_options(Options(run.cfg, refuse), refuse).on);
  ASSERT_EQ(refuse.size(), 1u);
  EXPECT_EQ(refuse.all()[0].setting, "option:security");
  EXPECT_EQ(refuse.all()[0].reason,
            "security=tls: not offered; the DDS Security modes are auth, access, encrypt, "
            "encrypt-payload and encrypt-submessage");
}

TEST(SdkDdsSecurity, RequiresTheSignedDocumentsBesideTheKeys) {
  char dir[] = "/tmp/psb-dds-security-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  for (const char *name : {"ca.pem", "cert.pem", "key.pem", "governance.p7s"})
    std::ofstream(std::string(dir) + "/" + name) << "x";
  SecurityRun run("encrypt", dir);
  Refusals refuse;
  const psb::sdk::Security sec = psb::sdk::dds_security_options(Options(run.cfg, refuse), refuse);
  try {
    psb::sdk::require_dds_security_files(sec);
    ADD_FAILURE() << "permissions.p7s is missing";
  } catch (const psb::sdk::Error &e) {
    EXPECT_EQ(std::string(e.what()), "security=encrypt: " + std::string(dir) +
                                         "/permissions.p7s is missing or unreadable");
  }
  std::ofstream(std::string(dir) + "/permissions.p7s") << "x";
  EXPECT_NO_THROW(psb::sdk::require_dds_security_files(sec));
  for (const char *name : {"ca.pem", "cert.pem", "key.pem", "governance.p7s", "permissions.p7s"})
    unlink((std::string(dir) + "/" + name).c_str());
  rmdir(dir);
}

}  // namespace
