// The one clock every timestamp in psbench comes from.
#pragma once
#include <cstdint>
#include <ctime>

namespace psb {

inline int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr int64_t seconds_to_ns(double s) { return int64_t(s * 1e9); }

}  // namespace psb
