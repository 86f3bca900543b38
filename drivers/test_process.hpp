// For a driver's GoogleTest: processes around the middleware under test.
//
// run_child_test: run one of the test binary's own tests in a fresh process
// (fork, then exec of /proc/self/exe), to see what a peer that ends without closing
// leaves behind. The child test is usually a DISABLED_ one (ctest never runs it on its
// own), reads its parameters from the environment variables given here, and ends with
// _exit(code). exec right after fork is safe in a test process that runs middleware
// threads; the environment is built before the fork.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char **environ;

namespace psb_test {

// The child's exit code; -1 if it was killed by a signal or outlived timeout_s (then it
// is killed).
inline int run_child_test(const std::string &test_name,
                          const std::vector<std::pair<std::string, std::string>> &env,
                          int timeout_s) {
  std::vector<std::string> vars;
  for (char **e = environ; *e != nullptr; ++e) vars.emplace_back(*e);
  for (const auto &[k, v] : env) vars.push_back(k + "=" + v);
  std::vector<char *> envp;
  for (auto &v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=" + test_name;
  char disabled[] = "--gtest_also_run_disabled_tests";
  char name[] = "psbench-test-child";
  char *argv[] = {name, filter.data(), disabled, nullptr};

  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Stops a process (a broker, a server) with SIGSTOP and returns once every one of its
// threads is stopped (kill() only posts the signal; a thread running on another core
// may go on for a moment). false if that did not happen within 5 s.
inline bool stop_process(pid_t pid) {
  if (kill(pid, SIGSTOP) != 0) return false;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < end) {
    bool all_stopped = true;
    if (DIR *d = opendir(tasks.c_str())) {
      while (dirent *e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream stat(tasks + "/" + e->d_name + "/stat");
        std::string line;
        std::getline(stat, line);
        const size_t paren = line.rfind(')');
        if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'T')
          all_stopped = false;
      }
      closedir(d);
    } else {
      return false;
    }
    if (all_stopped) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace psb_test
