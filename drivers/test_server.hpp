// For a driver's GoogleTest: a real server (a broker) in a process of its own, on 127.0.0.1
// and a free port, with its files in a temporary folder that goes away with it. The server
// dies with the test process (PR_SET_PDEATHSIG) even if the test crashes. The nats and
// mqtt tests start theirs with it.
#pragma once
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_net.hpp"

namespace psb_test {

// A port of 127.0.0.1 that nothing listens on now.
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n) == 0;
  const int e = errno;
  if (fd >= 0) close(fd);
  if (!ok) throw std::runtime_error(std::string("no free port: ") + std::strerror(e));
  return ntohs(a.sin_port);
}

class ServerProcess {
 public:
  // Makes the folder /tmp/psbench-<name>-test-XXXXXX for the server's files.
  explicit ServerProcess(const std::string &name) {
    std::string pattern = "/tmp/psbench-" + name + "-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    folder_ = pattern;
  }
  ~ServerProcess() {
    stop();
    std::filesystem::remove_all(folder_);
  }
  ServerProcess(const ServerProcess &) = delete;
  ServerProcess &operator=(const ServerProcess &) = delete;

  const std::string &folder() const { return folder_; }
  std::string file(const std::string &name) const { return folder_ + "/" + name; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Runs argv (argv[0]: the program's path) with its stdout and stderr appended to
  // log_file (in the folder), and waits until it accepts TCP connections on port of
  // 127.0.0.1: true. false when it ended before (the port taken in between, say: the
  // caller may try another). Throws when it neither accepts nor ends within timeout_s
  // (then it is killed), saying what the log says.
  bool start(const std::vector<std::string> &argv, const std::string &log_file, int port,
             int timeout_s) {
    log_ = file(log_file);
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    std::fflush(nullptr);  // the child would write what the test's stdout still buffers
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      execv(args[0], args.data());
      _exit(127);
    }
    pid_ = pid;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (!accepts_tcp(unsigned(port))) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      if (std::chrono::steady_clock::now() > end) {
        stop(SIGKILL);
        throw std::runtime_error(argv[0] + " did not accept connections within " +
                                 std::to_string(timeout_s) + " s: " + log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  // sig (SIGTERM, as psbench stops a server; SIGKILL, as if it crashed), then waits until
  // it is gone: after 10 s of SIGTERM with SIGKILL.
  void stop(int sig = SIGTERM) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    int status = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > end) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
  }

  // What the server wrote to its log so far.
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string folder_, log_;
  pid_t pid_ = -1;
};

}  // namespace psb_test
