// For mqtt_driver_test: a real mosquitto, started for a test on 127.0.0.1 and a free
// port with a generated configuration, stopped (and its folder removed) at the end.
// A durable one has the manifest's durable_config (its folder as {folder}), as psbench
// starts it for durability persistent, and can be killed and started again on the same
// port, configuration and folder.
#pragma once
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "test_net.hpp"

namespace psb_test {

// A port of 127.0.0.1 that nothing listens on now.
inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&a), &n) != 0)
    throw std::runtime_error("cannot find a free port");
  close(fd);
  return ntohs(a.sin_port);
}

// The manifest's durable_config, {folder} replaced (the text between its triple quotes).
inline std::string durable_config(const std::string &folder) {
  std::ifstream in(MQTT_MANIFEST);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str(), open = "durable_config = \"\"\"\n";
  const size_t start = all.find(open);
  const size_t end = start == std::string::npos ? start : all.find("\"\"\"", start + open.size());
  if (end == std::string::npos) throw std::runtime_error("no durable_config in " MQTT_MANIFEST);
  std::string conf = all.substr(start + open.size(), end - start - open.size());
  for (size_t at; (at = conf.find("{folder}")) != std::string::npos;) conf.replace(at, 8, folder);
  return conf;
}

class Broker {
 public:
  // extra: more configuration lines after the ones every test broker has.
  explicit Broker(const std::string &extra = "", bool durable = false) : port_(free_port()) {
    char tmpl[] = "/tmp/psb-mqtt-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    std::ofstream(dir_ + "/mosquitto.conf")
        << "listener " << port_ << " 127.0.0.1\n"
        << "allow_anonymous true\n"
        << "set_tcp_nodelay true\n"
        << "persistence false\n"
        << "log_dest stdout\n"
        << (durable ? "user root\n" + durable_config(dir_) : std::string()) << extra;
    start();
  }
  // As psbench starts it for durability persistent.
  static std::unique_ptr<Broker> durable() {
    return std::make_unique<Broker>("max_queued_messages 0\n", true);
  }
  ~Broker() {
    stop(SIGTERM);
    std::filesystem::remove_all(dir_);
  }
  Broker(const Broker &) = delete;
  Broker &operator=(const Broker &) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // SIGKILL: the broker vanishes without a word to its clients.
  void kill_now() { stop(SIGKILL); }
  // After kill_now() or stop(): the same port, configuration and folder (its log goes on).
  void start_again() { start(); }
  const std::string &folder() const { return dir_; }
  // SIGTERM, as psbench stops it; its log is complete after this (mosquitto's stdout
  // is block-buffered into the file).
  void stop() { stop(SIGTERM); }

  std::string log() const {
    std::ifstream in(dir_ + "/mosquitto.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  void start() {
    const std::string conf = dir_ + "/mosquitto.conf", out = dir_ + "/mosquitto.log";
    std::fflush(nullptr);  // the child would write what the test's stdout still buffers
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
      FILE *f = freopen(out.c_str(), "a", stdout);
      if (f == nullptr) _exit(126);
      dup2(STDOUT_FILENO, STDERR_FILENO);
      execl(MOSQUITTO_BROKER, "mosquitto", "-c", conf.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!accepts_tcp(unsigned(port_))) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("mosquitto ended at start: " + log());
      }
      if (std::chrono::steady_clock::now() > end) {
        stop(SIGKILL);
        throw std::runtime_error("mosquitto did not accept connections within 10 s: " + log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void stop(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  int port_;
  std::string dir_;
  pid_t pid_ = -1;
};

}  // namespace psb_test
