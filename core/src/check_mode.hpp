// --check and --check-stdin: every refusal of a configuration, found without opening
// anything (the same list a run is refused with), for people and for psbench's
// experiment validation (docs/node.md, "Checking a configuration").
#pragma once

namespace psb {

int run_check(int argc, const char *const *argv);  // 0 accepted, 2 refused
int run_check_stdin();                             // 0 once stdin ends

}  // namespace psb
