// For mqtt_driver_test: a real mosquitto, started for a test on 127.0.0.1 and a free
// port with a generated configuration, stopped (and its folder removed) at the end.
// A durable one has the manifest's durable_config (its folder as {folder}), as psbench
// starts it for durability persistent, and can be killed and started again on the same
// port, configuration and folder.
#pragma once
#include <signal.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "test_server.hpp"

namespace psb_test {

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
    std::ofstream(process_.file("mosquitto.conf"))
        << "listener " << port_ << " 127.0.0.1\n"
        << "allow_anonymous true\n"
        << "set_tcp_nodelay true\n"
        << "persistence false\n"
        << "log_dest stdout\n"
        << (durable ? "user root\n" + durable_config(folder()) : std::string()) << extra;
    start();
  }
  // As psbench starts it for durability persistent.
  static std::unique_ptr<Broker> durable() {
    return std::make_unique<Broker>("max_queued_messages 0\n", true);
  }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  pid_t pid() const { return process_.pid(); }
  bool running() const { return process_.running(); }

  // SIGKILL: the broker vanishes without a word to its clients.
  void kill_now() { process_.stop(SIGKILL); }
  // After kill_now() or stop(): the same port, configuration and folder (its log goes on).
  void start_again() { start(); }
  const std::string &folder() const { return process_.folder(); }
  // SIGTERM, as psbench stops it; its log is complete after this (mosquitto's stdout
  // is block-buffered into the file).
  void stop() { process_.stop(SIGTERM); }

  std::string log() const { return process_.log(); }

 private:
  void start() {
    if (!process_.start({MOSQUITTO_BROKER, "-c", process_.file("mosquitto.conf")}, "mosquitto.log",
                        port_, 10))
      throw std::runtime_error("mosquitto ended at start: " + log());
  }

  ServerProcess process_{"mqtt"};  // its folder: /tmp/psbench-mqtt-test-XXXXXX
  int port_;
};

}  // namespace psb_test
