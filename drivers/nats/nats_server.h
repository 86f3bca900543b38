// For the nats driver's GoogleTest: a real nats-server on 127.0.0.1 and a free port,
// started from a generated configuration file and stopped (and its files removed) when
// the object goes away (psb_test::ServerProcess).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "test_server.hpp"

namespace psb_test {

// The executable: nats-server from /usr/sbin, /usr/bin, /usr/local/bin or /usr/local/sbin.
inline std::string nats_server_path() {
  for (const char *dir : {"/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"}) {
    std::string p = std::string(dir) + "/nats-server";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "nats-server";
}

class NatsServer {
 public:
  // Starts nats-server and waits until it accepts connections; throws on failure.
  explicit NatsServer(uint64_t max_payload = 8388608) {
    const std::string exe = nats_server_path(), conf = process_.file("nats-server.conf");
    for (int attempt = 0; attempt < 5; ++attempt) {  // a port taken in between: another
      port_ = free_port();
      std::ofstream(conf) << "listen: 127.0.0.1:" << port_ << "\n"
                          << "max_payload: " << max_payload << "\n";
      if (process_.start({exe, "-c", conf}, "nats-server.log", port_, 20)) return;
    }
    throw std::runtime_error("nats-server (" + exe + ") did not start: " + process_.log());
  }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return process_.pid(); }
  // SIGKILL, as if the server crashed; waits for it to be gone.
  void kill_now() { process_.stop(SIGKILL); }
  bool running() const { return process_.running(); }

 private:
  ServerProcess process_{"nats"};
  int port_ = 0;
};

}  // namespace psb_test
