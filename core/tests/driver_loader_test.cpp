// The node refuses, at load and with exit code 2, a driver it cannot use: one built for
// another ABI version (naming both versions), one with half of a zero-copy write. The
// libraries are core/tests/fake_driver.c, built twice.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "psbench/driver.h"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Outcome node(const std::string &args) {
  Outcome o;
  FILE *p = popen((std::string(PSBENCH_NODE) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return o;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) o.output.append(buf, n);
  const int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const std::string kAbi4 = PSBENCH_FAKE_ABI4_DRIVER;
const std::string kHalfLoan = PSBENCH_FAKE_HALF_LOAN_DRIVER;

}  // namespace

TEST(DriverLoader, ADriverOfAnotherAbiVersionIsRefusedNamingBothVersions) {
  const std::string expected = "driver " + kAbi4 + " was built for psbench driver ABI 4; this "
                               "psbench-node speaks ABI " + std::to_string(PSB_ABI_VERSION) +
                               ": rebuild the driver";
  for (const char *mode : {"--describe", "--role ping --out /nonexistent"}) {
    const Outcome o = node("--driver " + kAbi4 + " " + mode);
    EXPECT_EQ(o.exit_code, 2) << mode << ": " << o.output;
    EXPECT_NE(o.output.find(expected), std::string::npos) << mode << ": " << o.output;
  }
  // --check says the same as its refusal, of setting "driver".
  const Outcome check = node("--driver " + kAbi4 + " --role ping --check --json");
  EXPECT_EQ(check.exit_code, 2) << check.output;
  EXPECT_NE(check.output.find("\"setting\": \"driver\""), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("built for psbench driver ABI 4"), std::string::npos) << check.output;
}

TEST(DriverLoader, ADriverWithLoanButNoWriteLoanIsRefused) {
  const Outcome o = node("--driver " + kHalfLoan + " --describe");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("provides loan() without write_loan(): a zero-copy write needs both"),
            std::string::npos)
      << o.output;
}
