// For a driver's GoogleTest: processes around the middleware under test.
//
// run_child_test: run one of the test binary's own tests in a fresh process
// (fork, then exec of /proc/self/exe), to see what a peer that ends without closing
// leaves behind. The child test is usually a DISABLED_ one (ctest never runs it on its
// own), reads its parameters from the environment variables given here, and ends with
// _exit(code). exec right after fork is safe in a test process that runs middleware
// threads; the environment is built before the fork.
//
// ResumeAtExit: a process the test stopped runs again however the test's scope ends.
// ChildReport: this test binary started again with other arguments (a reader in its
// own process that the test can SIGSTOP), its stdout read line by line; lines of the
// form "key number" are its report.
#pragma once
#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
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

// A writer in a process of its own (the DISABLED_ child test `name` of this binary):
// publishes count messages to topic through the broker, drains, and ends at once
// without closing anything. Its exit code, 10 when its drain returned 1.
inline int run_draining_writer(const std::string &name, const std::string &broker,
                               const std::string &topic, uint64_t count, int timeout_s) {
  return run_child_test(name,
                        {{"PSB_CHILD_BROKER", broker},
                         {"PSB_CHILD_TOPIC", topic},
                         {"PSB_CHILD_COUNT", std::to_string(count)},
                         {"PSB_CHILD_DRAIN", "1"}},
                        timeout_s);
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

struct ResumeAtExit {
  pid_t pid;
  ~ResumeAtExit() { kill(pid, SIGCONT); }
};

// An environment variable, or "" (a child test's parameter).
inline const char *env_or_empty(const char *name) {
  const char *v = std::getenv(name);
  return v != nullptr ? v : "";
}

// This test binary run as a child with `args` after its name; killed (after SIGCONT, so a
// stopped child dies too) if the test ends before finish().
struct ChildReport {
  pid_t pid = -1;
  FILE *out = nullptr;

  bool start(const std::vector<std::string> &args) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<std::string> all{"/proc/self/exe"};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      pid = -1;
      close(fds[0]);
      return false;
    }
    out = fdopen(fds[0], "r");
    return out != nullptr;
  }
  // The next line the child printed, without its newline; empty at its end.
  std::string line() {
    char buf[256];
    if (out == nullptr || std::fgets(buf, sizeof buf, out) == nullptr) return "";
    std::string l(buf);
    if (!l.empty() && l.back() == '\n') l.pop_back();
    return l;
  }
  // Every "key number" line the child printed until it ended, and {"exit", status}
  // (99 when it did not exit normally).
  std::map<std::string, uint64_t> finish() {
    std::map<std::string, uint64_t> got;
    for (std::string l; !(l = line()).empty();) {
      const size_t sp = l.find(' ');
      if (sp != std::string::npos) got[l.substr(0, sp)] = std::stoull(l.substr(sp + 1));
    }
    int status = -1;
    if (pid > 0 && waitpid(pid, &status, 0) == pid) pid = -1;
    got["exit"] = WIFEXITED(status) ? uint64_t(WEXITSTATUS(status)) : 99;
    return got;
  }
  ~ChildReport() {
    if (pid > 0) {
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (out != nullptr) std::fclose(out);
  }
};

}  // namespace psb_test
