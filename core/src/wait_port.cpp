#include "wait_port.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "clock.hpp"

namespace psb {

namespace {

// One attempt, bounded by timeout_ms even when nothing answers (a filtered port).
bool accepts(const sockaddr_in &to, int timeout_ms) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = false;
  if (connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof to) == 0) {
    ok = true;
  } else if (errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok = poll(&p, 1, timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
         err == 0;
  }
  close(fd);
  return ok;
}

}  // namespace

int run_wait_port(int argc, const char *const *argv) {
  int at = 1;
  while (at < argc && std::strcmp(argv[at], "--wait-port") != 0) ++at;
  if (at + 2 >= argc) {
    std::fprintf(stderr, "psbench-node: usage: --wait-port ADDRESS:PORT SECONDS\n");
    return 2;
  }
  const std::string where = argv[at + 1];
  const size_t colon = where.rfind(':');
  sockaddr_in to{};
  to.sin_family = AF_INET;
  char *end = nullptr;
  const long port =
      colon == std::string::npos ? 0 : std::strtol(where.c_str() + colon + 1, &end, 10);
  const double seconds = std::atof(argv[at + 2]);
  if (port <= 0 || port > 65535 || (end && *end) ||
      inet_pton(AF_INET, where.substr(0, colon).c_str(), &to.sin_addr) != 1 || seconds <= 0) {
    std::fprintf(stderr, "psbench-node: --wait-port: give an IPv4 ADDRESS:PORT and SECONDS > 0\n");
    return 2;
  }
  to.sin_port = htons(uint16_t(port));
  const int64_t deadline = now_ns() + seconds_to_ns(seconds);
  while (!accepts(to, 200)) {
    if (now_ns() > deadline) {
      std::fprintf(stderr, "psbench-node: nothing accepts on %s within %g s\n", where.c_str(),
                   seconds);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

}  // namespace psb
