// For the module tests: node processes started with the stdio barrier, the record files
// a module writes (docs/graphs.md), and numbers read from its summary.
#pragma once
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace psb_test {

inline std::string driver_path(const std::string &name) {
  return std::string(PSBENCH_DRIVER_DIR) + "/" + name + "/libpsbench-" + name + ".so";
}

inline std::string fresh_run_id() {
  static std::atomic<int> n{0};
  return "gm" + std::to_string(getpid()) + "x" + std::to_string(n++);
}

// A node process: stdin and stdout are pipes (the stdio barrier), stderr goes to a file.
struct Proc {
  pid_t pid = -1;
  int to_child = -1, from_child = -1;
};

inline Proc start(const std::vector<std::string> &args, const std::string &stderr_path) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0) return {};
  Proc p;
  p.pid = fork();
  if (p.pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  p.to_child = in[1];
  p.from_child = out[0];
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

inline int finish(const Proc &p) {
  int status = 0;
  waitpid(p.pid, &status, 0);
  close(p.to_child);
  close(p.from_child);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline std::string slurp(const std::string &path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The integer after "key": following the first occurrence of anchor (-1: null, -2: absent).
inline int64_t number_after(const std::string &json, const std::string &anchor,
                            const std::string &key) {
  size_t at = json.find(anchor);
  if (at == std::string::npos) return -2;
  size_t k = json.find("\"" + key + "\": ", at);
  if (k == std::string::npos) return -2;
  const char *p = json.c_str() + k + key.size() + 4;
  if (std::strncmp(p, "null", 4) == 0) return -1;
  return std::strtoll(p, nullptr, 10);
}

// docs/graphs.md, "Records".
struct Activation {
  uint64_t activation;
  int64_t scheduled_ns, start_ns, end_ns;
  uint32_t trigger, flags;
};
struct Origin {
  uint64_t activation, newest_seq;
  int64_t newest_ns, oldest_ns;
  uint32_t source, reserved;
};
struct Arrival {
  uint64_t seq;
  int64_t send_ns, arrival_ns;
  uint32_t input, writer;
};
static_assert(sizeof(Activation) == 40 && sizeof(Origin) == 40 && sizeof(Arrival) == 32);

// The records of one file; magic and record size checked (empty when they are wrong).
template <typename Record>
std::vector<Record> read_records(const std::string &path, const char *magic) {
  std::ifstream f(path, std::ios::binary);
  char header[64] = {};
  f.read(header, 64);
  uint32_t version, size;
  uint64_t count;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&size, header + 12, 4);
  std::memcpy(&count, header + 16, 8);
  if (!f || std::memcmp(header, magic, 8) != 0 || version != 1 || size != sizeof(Record)) return {};
  std::vector<Record> out(count);
  f.read(reinterpret_cast<char *>(out.data()), std::streamsize(count * sizeof(Record)));
  return out;
}

// One module's files in dir.
struct ModuleFiles {
  std::vector<Activation> activations;
  std::vector<Origin> origins;
  std::vector<Arrival> arrivals;
  std::string json;
};

inline ModuleFiles read_module(const std::string &dir, const std::string &name) {
  const std::string stem = dir + "/" + name;
  return {read_records<Activation>(stem + ".activations", "PSBACT01"),
          read_records<Origin>(stem + ".origins", "PSBORG01"),
          read_records<Arrival>(stem + ".arrivals", "PSBARR01"), slurp(stem + ".json")};
}

}  // namespace psb_test
