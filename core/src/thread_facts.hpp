// What each thread of this process is and did, from /proc/self/task: how a middleware's
// own threads were placed next to the role's (docs/node.md, "threads"). Off the timed
// path: read once, when the measurement ends.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace psb {

struct ThreadFacts {
  int tid = 0;
  std::string name;         // comm
  std::string cpus;         // Cpus_allowed_list, e.g. "0-1"
  std::string policy;       // SCHED_OTHER, SCHED_FIFO, ...
  int priority = 0;         // real-time priority (0 for SCHED_OTHER)
  int64_t cpu_time_ns = 0;  // user + system
  uint64_t voluntary_switches = 0, involuntary_switches = 0;
};

std::vector<ThreadFacts> process_threads();
int current_tid();
// The CPUs every thread of this process may run on is narrowed to `cpus` (the threads
// there now and, through inheritance, every thread they start). Throws RealtimeError.
void confine_process(const std::vector<int> &cpus);

}  // namespace psb
