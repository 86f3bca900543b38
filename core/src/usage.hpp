// CPU time, peak memory and context switches, for the process and for one thread.
#pragma once
#include <cstdint>

namespace psb {

struct Usage {
  double user_s = 0, sys_s = 0;
  int64_t max_rss_kb = 0;
  int64_t voluntary_ctx_switches = 0, involuntary_ctx_switches = 0;
};

Usage process_usage();
Usage thread_usage();  // the calling thread

}  // namespace psb
