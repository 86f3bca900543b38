// Writes a role's JSON summary and samples file (docs/node.md, "Output").
#pragma once
#include <string>

#include "config.hpp"
#include "driver_loader.hpp"
#include "role.hpp"

namespace psb {

struct ProcessFacts {
  std::string placement;  // "inter-process" or "intra-process"
  bool mlockall = false, dma_latency = false;
  int64_t started_ns = 0;  // CLOCK_MONOTONIC when main() began
  Usage usage;
};

// Throws std::runtime_error when a file cannot be written.
void write_role_outputs(const NodeConfig &node, const LoadedDriver &driver,
                        const DriverConfig &dcfg, const ProcessFacts &facts, const RoleResult &res);

}  // namespace psb
