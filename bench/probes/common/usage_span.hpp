// CPU time and context switches of a probe's whole process (every middleware thread
// included), from start() to the line print() writes, per message: the "usage" line
// bench/truth reads after a DDS probe's result line.
#pragma once
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>

namespace probe {

class UsageSpan {
 public:
  void start() {
    getrusage(RUSAGE_SELF, &begin_);
    started_ = true;
  }
  bool started() const { return started_; }
  void print(FILE *to, const char *role, uint64_t messages) const {
    rusage end;
    getrusage(RUSAGE_SELF, &end);
    auto us = [](const timeval &t) { return double(t.tv_sec) * 1e6 + double(t.tv_usec); };
    const double n = messages ? double(messages) : 1.0;
    const double cpu =
        us(end.ru_utime) - us(begin_.ru_utime) + us(end.ru_stime) - us(begin_.ru_stime);
    // Then the whole process's CPU time so far (start-up, discovery, warm-up included),
    // as psbench-node reports its own.
    std::fprintf(
        to, "usage %s messages %llu cpu_us %.3f vcsw %.3f ivcsw %.3f process_cpu_s %.4f\n", role,
        (unsigned long long)messages, cpu / n, double(end.ru_nvcsw - begin_.ru_nvcsw) / n,
        double(end.ru_nivcsw - begin_.ru_nivcsw) / n, (us(end.ru_utime) + us(end.ru_stime)) / 1e6);
    std::fflush(to);
  }

 private:
  rusage begin_{};
  bool started_ = false;
};

}  // namespace probe
