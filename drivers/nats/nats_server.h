// For the nats driver's GoogleTest: a real nats-server on 127.0.0.1 and a free port,
// started from a generated configuration file and stopped (and its files removed) when
// the object goes away.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace psb_test {

class NatsServer {
 public:
  // Starts nats-server and waits until it accepts connections; throws on failure.
  explicit NatsServer(uint64_t max_payload = 8388608);
  ~NatsServer();
  NatsServer(const NatsServer &) = delete;
  NatsServer &operator=(const NatsServer &) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  // SIGKILL, as if the server crashed; waits for it to be gone.
  void kill_now();
  bool running() const { return pid_ > 0; }

 private:
  void stop();
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// The executable: nats-server from PATH or /usr/sbin.
std::string nats_server_path();

}  // namespace psb_test
