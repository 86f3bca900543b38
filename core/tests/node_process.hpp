// For the tests that run psbench-node as a child process: the build's drivers, fresh run
// ids, a node started with its stdio barrier on pipes, and a file's text.
#pragma once
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace psb_test {

inline std::string driver_path(const std::string &name) {
  return std::string(PSBENCH_DRIVER_DIR) + "/" + name + "/libpsbench-" + name + ".so";
}

// Unique within the test binary and among concurrent ones (the process id).
inline std::string fresh_run_id() {
  static std::atomic<int> n{0};
  return "gm" + std::to_string(getpid()) + "x" + std::to_string(n++);
}

// A node process: stdin and stdout are pipes when piped (the stdio barrier), else the
// test's own; stderr goes to a file.
struct Proc {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
};

inline Proc start(const std::vector<std::string> &args, const std::string &stderr_path,
                  bool piped = true) {
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (piped && (pipe(in) != 0 || pipe(out) != 0)) return {};
  Proc p;
  p.pid = fork();
  if (p.pid == 0) {
    if (piped) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
    }
    int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (piped) {
    close(in[0]);
    close(out[1]);
    p.to_child = in[1];
    p.from_child = out[0];
  }
  return p;
}

// Reads the child's stdout up to "READY\n"; false when it ended first.
inline bool ready(const Proc &p) {
  std::string got;
  char c;
  while (read(p.from_child, &c, 1) == 1) {
    got += c;
    if (got.find("READY\n") != std::string::npos) return true;
  }
  return false;
}

// A child that already ended must fail the test with its stderr, not kill the test
// process with SIGPIPE.
inline void go(const Proc &p) {
  std::signal(SIGPIPE, SIG_IGN);
  (void)!write(p.to_child, "GO\n", 3);
}

// The child's exit code, 128 + the signal that ended it.
inline int finish(const Proc &p) {
  int status = 0;
  waitpid(p.pid, &status, 0);
  if (p.to_child >= 0) close(p.to_child);
  if (p.from_child >= 0) close(p.from_child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace psb_test
