// For the module tests: the record files a module writes (docs/graphs.md) and numbers
// read from its summary; node processes from node_process.hpp.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "node_process.hpp"

namespace psb_test {

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
