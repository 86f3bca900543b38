#include "thread_facts.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "realtime.hpp"

namespace psb {
namespace {

std::string first_line(const std::string &path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

const char *policy_name(int policy) {
  switch (policy) {
    case SCHED_OTHER:
      return "SCHED_OTHER";
    case SCHED_FIFO:
      return "SCHED_FIFO";
    case SCHED_RR:
      return "SCHED_RR";
    case SCHED_BATCH:
      return "SCHED_BATCH";
    case SCHED_IDLE:
      return "SCHED_IDLE";
  }
  return "unknown";
}

std::vector<int> task_ids() {
  std::vector<int> tids;
  if (DIR *d = opendir("/proc/self/task")) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') tids.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  return tids;
}

ThreadFacts facts_of(int tid) {
  ThreadFacts t;
  t.tid = tid;
  const std::string dir = "/proc/self/task/" + std::to_string(tid);
  t.name = first_line(dir + "/comm");
  // schedstat: nanoseconds on a CPU (exact); without it (no CONFIG_SCHEDSTATS) stat's
  // utime + stime, fields 14 and 15, in clock ticks (10 ms).
  const std::string schedstat = first_line(dir + "/schedstat");
  const std::string stat = schedstat.empty() ? first_line(dir + "/stat") : std::string();
  if (!schedstat.empty()) {
    t.cpu_time_ns = int64_t(std::strtoull(schedstat.c_str(), nullptr, 10));
  } else if (size_t paren = stat.rfind(')'); paren != std::string::npos) {
    std::istringstream rest(stat.substr(paren + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) {
        stime = std::stoull(field);
        break;
      }
    }
    const long hz = sysconf(_SC_CLK_TCK);
    t.cpu_time_ns = int64_t((utime + stime) * (1'000'000'000 / (hz > 0 ? hz : 100)));
  }
  std::ifstream status(dir + "/status");
  for (std::string line; std::getline(status, line);) {
    auto value = [&](const char *key) -> const char * {
      const size_t n = std::strlen(key);
      return line.compare(0, n, key) == 0 ? line.c_str() + n : nullptr;
    };
    if (const char *v = value("Cpus_allowed_list:"))
      t.cpus = std::string(v + std::strspn(v, " \t"));
    if (const char *v = value("voluntary_ctxt_switches:"))
      t.voluntary_switches = std::strtoull(v, nullptr, 10);
    if (const char *v = value("nonvoluntary_ctxt_switches:"))
      t.involuntary_switches = std::strtoull(v, nullptr, 10);
  }
  const int policy = sched_getscheduler(tid);
  t.policy = policy < 0 ? "unknown" : policy_name(policy);
  sched_param p{};
  if (sched_getparam(tid, &p) == 0) t.priority = p.sched_priority;
  return t;
}

}  // namespace

int current_tid() { return int(syscall(SYS_gettid)); }

std::vector<ThreadFacts> process_threads() {
  std::vector<ThreadFacts> found;
  for (int tid : task_ids()) found.push_back(facts_of(tid));
  return found;
}

void confine_process(const std::vector<int> &cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
      throw RealtimeError("--pin process: CPU " + std::to_string(cpu) + " does not exist");
    CPU_SET(cpu, &set);
  }
  for (int tid : task_ids())
    if (sched_setaffinity(tid, sizeof set, &set) != 0)
      throw RealtimeError("--pin process: cannot confine thread " + std::to_string(tid) + ": " +
                          std::strerror(errno) + " (are the CPUs online and in this cpuset?)");
}

}  // namespace psb
