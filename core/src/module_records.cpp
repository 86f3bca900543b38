#include "module_records.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace psb {
namespace {

// 64 bytes, like the samples file's header.
struct RecordsFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t record_size;
  uint64_t count;
  uint32_t module_id;
  uint32_t sources;
  int64_t start_ns;  // when the module's measurement began
  uint8_t padding[24];
};
static_assert(sizeof(RecordsFileHeader) == 64, "a record file's header is 64 bytes");

template <typename Record>
void write_stream(const std::string &path, const char *magic, const RecordStream<Record> &s,
                  uint32_t module_id, uint32_t sources, int64_t start_ns) {
  RecordsFileHeader h{};
  std::memcpy(h.magic, magic, 8);
  h.version = 1;
  h.record_size = sizeof(Record);
  h.count = s.kept();
  h.module_id = module_id;
  h.sources = sources;
  h.start_ns = start_ns;
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  bool ok = std::fwrite(&h, sizeof h, 1, f.get()) == 1;
  if (s.kept()) ok = ok && std::fwrite(s.data(), sizeof(Record), s.kept(), f.get()) == s.kept();
  if (!ok || std::fflush(f.get()) != 0)
    throw std::runtime_error("failed writing " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_module_records(const std::string &dir, const std::string &name, const ModuleResult &m,
                          uint32_t module_id, uint32_t sources, int64_t start_ns) {
  const std::string stem = dir + "/" + name;
  write_stream(stem + ".activations", "PSBACT01", m.activations, module_id, sources, start_ns);
  write_stream(stem + ".origins", "PSBORG01", m.origins, module_id, sources, start_ns);
  write_stream(stem + ".arrivals", "PSBARR01", m.arrivals, module_id, sources, start_ns);
}

}  // namespace psb
