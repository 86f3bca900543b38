#include "usage.hpp"

#include <sys/resource.h>

#include <cstdio>
#include <cstring>

namespace psb {
namespace {

Usage from(int who) {
  rusage ru{};
  getrusage(who, &ru);
  Usage u;
  u.user_s = double(ru.ru_utime.tv_sec) + double(ru.ru_utime.tv_usec) * 1e-6;
  u.sys_s = double(ru.ru_stime.tv_sec) + double(ru.ru_stime.tv_usec) * 1e-6;
  u.max_rss_kb = ru.ru_maxrss;
  u.voluntary_ctx_switches = ru.ru_nvcsw;
  u.involuntary_ctx_switches = ru.ru_nivcsw;
  return u;
}

// The process's own peak resident set (kB): VmHWM of /proc/self/status, the high-water
// mark of this program's memory since its exec. getrusage's ru_maxrss is not that: the
// kernel carries the largest RSS of the process's earlier images across exec (and a
// child starts from its parent's at fork), so a node started by a large launcher (the
// Python CLI) reported the launcher's peak. -1 when /proc cannot be read.
int64_t own_peak_rss_kb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) {
      if (std::sscanf(line + 6, "%lld", &kb) != 1) kb = -1;
      break;
    }
  }
  std::fclose(f);
  return kb;
}

}  // namespace

Usage process_usage() {
  Usage u = from(RUSAGE_SELF);
  const int64_t own = own_peak_rss_kb();
  if (own >= 0) u.max_rss_kb = own;
  return u;
}
Usage thread_usage() { return from(RUSAGE_THREAD); }

}  // namespace psb
