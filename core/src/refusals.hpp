// Every setting a driver cannot honour, found before anything is created: the node's
// own checks against the driver's capabilities, then every refusal of the driver's
// check() (one of a setting the node refused too is appended to the node's). The same
// list refuses a run (exit code 2) and answers `--check` (docs/node.md).
#pragma once
#include <psbench/driver.h>

#include <string>
#include <vector>

#include "config.hpp"
#include "driver_loader.hpp"

namespace psb {

struct Refusal {
  std::string setting;  // reliability, durability, history, notify, transport, size,
                        // subscribers, publishers, loan, placement, option:KEY, driver,
                        // arguments
  std::string message;
};

std::vector<Refusal> refusals(const LoadedDriver &driver, const NodeConfig &node,
                              const psb_config &cfg);

// Throws RefusedError with every refusal, "; " between them.
void refuse_unsupported(const LoadedDriver &driver, const NodeConfig &node, const psb_config &cfg);

// {"accepted": bool, "refusals": [{"setting": ..., "message": ...}]}
std::string refusals_json(const std::vector<Refusal> &found);

}  // namespace psb
