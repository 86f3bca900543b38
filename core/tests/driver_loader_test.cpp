// The node refuses, at load and with exit code 2, a driver it cannot use: one built for
// another ABI version (naming both versions), one with half of a zero-copy write. The
// libraries are core/tests/fake_driver.c, built twice.
#include <gtest/gtest.h>

#include <string>

#include "psbench/driver.h"
#include "run_node.hpp"

namespace {

using psb_test::run_node;

const std::string kAbi4 = PSBENCH_FAKE_ABI4_DRIVER;
const std::string kHalfLoan = PSBENCH_FAKE_HALF_LOAN_DRIVER;

}  // namespace

TEST(DriverLoader, ADriverOfAnotherAbiVersionIsRefusedNamingBothVersions) {
  const std::string expected = "driver " + kAbi4 +
                               " was built for psbench driver ABI 4; this "
                               "psbench-node speaks ABI " +
                               std::to_string(PSB_ABI_VERSION) + ": rebuild the driver";
  for (const char *mode : {"--describe", "--role ping --out /nonexistent"}) {
    const psb_test::NodeOutcome o = run_node("--driver " + kAbi4 + " " + mode);
    EXPECT_EQ(o.exit_code, 2) << mode << ": " << o.output;
    EXPECT_NE(o.output.find(expected), std::string::npos) << mode << ": " << o.output;
  }
  // --check says the same as its refusal, of setting "driver".
  const psb_test::NodeOutcome check = run_node("--driver " + kAbi4 + " --role ping --check --json");
  EXPECT_EQ(check.exit_code, 2) << check.output;
  EXPECT_NE(check.output.find("\"setting\": \"driver\""), std::string::npos) << check.output;
  EXPECT_NE(check.output.find("built for psbench driver ABI 4"), std::string::npos) << check.output;
}

TEST(DriverLoader, ADriverWithLoanButNoWriteLoanIsRefused) {
  const psb_test::NodeOutcome o = run_node("--driver " + kHalfLoan + " --describe");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("provides loan() without write_loan(): a zero-copy write needs both"),
            std::string::npos)
      << o.output;
}
