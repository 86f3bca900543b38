#include "nats_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace psb_test {
namespace {

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&sa), &len) != 0)
    throw std::runtime_error(std::string("no free port: ") + std::strerror(errno));
  close(fd);
  return ntohs(sa.sin_port);
}

bool accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(uint16_t(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof sa) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

std::string read_file(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string nats_server_path() {
  for (const char *dir : {"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"}) {
    std::string p = std::string(dir) + "/nats-server";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "nats-server";
}

NatsServer::NatsServer(uint64_t max_payload) {
  char tmpl[] = "/tmp/psbench-nats-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string exe = nats_server_path();
  const std::string conf = dir_ + "/nats-server.conf", log = dir_ + "/nats-server.log";
  for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
    port_ = free_port();
    {
      std::ofstream out(conf);
      out << "listen: 127.0.0.1:" << port_ << "\n"
          << "max_payload: " << max_payload << "\n";
    }
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test leaves no server behind
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execl(exe.c_str(), exe.c_str(), "-c", conf.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    pid_ = pid;
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!accepts(port_)) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;  // it ended (e.g. the port was taken in between): try another port
        break;
      }
      if (std::chrono::steady_clock::now() > end) {
        stop();
        throw std::runtime_error("nats-server did not accept connections within 20 s: " +
                                 read_file(log));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (pid_ < 0) {
    std::string text = read_file(log);
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("nats-server (" + exe + ") did not start: " + text);
  }
}

void NatsServer::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 500 && !reaped; ++i) {
      reaped = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!reaped) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }
}

void NatsServer::kill_now() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
}

NatsServer::~NatsServer() {
  stop();
  if (!dir_.empty()) std::filesystem::remove_all(dir_);
}

}  // namespace psb_test
