// For the redis driver's GoogleTest: a real redis-server of its own, started with a
// generated configuration on 127.0.0.1 and a free port, in a temporary directory that
// goes away with it. The server dies with the test process (PR_SET_PDEATHSIG) even if
// the test crashes. A durable one has the manifest's durable_config appended (its
// append-only file in <dir>/data); restart() kills it (SIGKILL) and starts it again on
// the same port, configuration and data, as psbench's --restart-broker does.
#pragma once
#include <fcntl.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace psb_test {

class RedisServer {
 public:
  // What psbench's orchestrator writes too (see the driver's README).
  // The manifest's durable_config, for runs with durability persistent.
  static constexpr const char *kDurableConfig =
      "appendonly yes\n"
      "appenddirname data\n"
      "appendfsync always\n"
      "auto-aof-rewrite-percentage 100\n"
      "auto-aof-rewrite-min-size 64mb\n";

  static std::string config(const std::string &dir, int port) {
    std::ostringstream c;
    c << "bind 127.0.0.1\n"
      << "port " << port << "\n"
      << "save \"\"\n"
      << "appendonly no\n"
      << "protected-mode yes\n"
      << "client-output-buffer-limit pubsub 512mb 128mb 60\n"
      << "daemonize no\n"
      << "dir " << dir << "\n"
      << "logfile " << dir << "/redis.log\n";
    return c.str();
  }

  explicit RedisServer(bool durable = false) : durable_(durable) {
    char tmpl[] = "/tmp/psbench-redis-test-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = free_port();
      if (start()) return;
    }
    const std::string log = this->log();
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("redis-server did not start (is Debian's redis-server installed?): " +
                             log);
  }

  ~RedisServer() {
    stop();
    std::filesystem::remove_all(dir_);
  }

  RedisServer(const RedisServer &) = delete;
  RedisServer &operator=(const RedisServer &) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  std::string log() const {
    std::ifstream f(dir_ + "/redis.log");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  void kill9() { end(SIGKILL); }
  // Started again after kill9() (or stop()) on the same port, configuration and data.
  void start_again() {
    if (pid_ > 0) throw std::runtime_error("start_again() of a running redis-server");
    if (!start()) throw std::runtime_error("redis-server did not start again: " + log());
  }
  const std::string &dir() const { return dir_; }
  void stop() { end(SIGTERM); }
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

  // A plain hiredis client of this server, for looking at it from outside the driver.
  redisContext *client() const {
    redisContext *c = redisConnect("127.0.0.1", port_);
    if (c == nullptr || c->err)
      throw std::runtime_error("cannot connect to the test's redis-server");
    return c;
  }

 private:
  static int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
  }

  bool start() {
    const std::string conf = dir_ + "/redis.conf";
    std::ofstream(conf) << config(dir_, port_) << (durable_ ? kDurableConfig : "");
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      int null = open("/dev/null", O_RDWR);
      dup2(null, 0);
      dup2(null, 1);
      setpgid(0, 0);  // a Ctrl-C of the test is not the server's
      execlp("redis-server", "redis-server", conf.c_str(), static_cast<char *>(nullptr));
      _exit(127);
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {  // ended: the port was taken?
        pid_ = -1;
        return false;
      }
      redisContext *c = redisConnect("127.0.0.1", port_);
      if (c != nullptr && c->err == 0) {
        auto *r = static_cast<redisReply *>(redisCommand(c, "PING"));
        const bool ok =
            r != nullptr && r->type == REDIS_REPLY_STATUS && std::string(r->str) == "PONG";
        if (r != nullptr) freeReplyObject(r);
        redisFree(c);
        if (ok) return true;
      } else if (c != nullptr) {
        redisFree(c);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    end_process(SIGKILL);
    return false;
  }

  void end(int sig) {
    if (pid_ <= 0) return;
    if (sig == SIGTERM) ::kill(pid_, SIGCONT);  // in case a test left it stopped
    end_process(sig);
  }

  void end_process(int sig) {
    ::kill(pid_, sig);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    int status;
    while (waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > end) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
  }

  bool durable_ = false;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace psb_test
