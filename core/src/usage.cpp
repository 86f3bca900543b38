#include "usage.hpp"

#include <sys/resource.h>

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

}  // namespace

Usage process_usage() { return from(RUSAGE_SELF); }
Usage thread_usage() { return from(RUSAGE_THREAD); }

}  // namespace psb
