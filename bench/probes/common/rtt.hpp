// What every probe measures with and prints: a monotonic clock and the one result line
// bench/truth reads of a ping, "p50_us p99_us count" (nearest rank). The probes' own
// code, shared among them only: no psbench code (docs/methodology.md, the probes).
#pragma once
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace probe {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Sorts the round trips (ns) and prints "p50_us p99_us count" to stdout; false, printing
// nothing, when there is none.
template <class Ns>
bool print_rtt_line(std::vector<Ns> &rtt) {
  if (rtt.empty()) return false;
  std::sort(rtt.begin(), rtt.end());
  const size_t n = rtt.size();
  auto rank = [n](size_t pct) { return std::max<size_t>(1, (pct * n + 99) / 100) - 1; };
  std::printf("%.3f %.3f %zu\n", rtt[rank(50)] / 1000.0, rtt[rank(99)] / 1000.0, n);
  return true;
}

}  // namespace probe
