// --clock-echo: the far end of psbench's clock-offset exchange (docs/network.md, "Clocks
// of real machines"). The orchestrator times each line it sends and the answer, over the
// run's control channel (SSH), on its own CLOCK_MONOTONIC; the answer is this machine's.
#pragma once

namespace psb {

int run_clock_echo();  // 0 once stdin ends (or the limits below are reached)

}  // namespace psb
