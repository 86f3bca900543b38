// Runs psbench-node (the build's, PSBENCH_NODE) with a shell argument string and returns
// its exit code and everything it printed, stdout and stderr together.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace psb_test {

struct NodeOutcome {
  int exit_code = -1;  // -1: not run, or ended by a signal
  std::string output;
};

inline NodeOutcome run_node(const std::string &args) {
  NodeOutcome o;
  FILE *p = popen((std::string(PSBENCH_NODE) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return o;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) o.output.append(buf, n);
  const int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

}  // namespace psb_test
