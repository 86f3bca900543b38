#include "sample_store.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace psb {

SampleStore::SampleStore(uint64_t capacity)
    : capacity_(capacity), records_(capacity, SampleRecord{}) {}

namespace {

struct SamplesFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t record_size;
  uint64_t count;
  uint32_t kind;
  uint32_t reserved;
  int64_t start_ns;
  uint8_t padding[24];
};
static_assert(sizeof(SamplesFileHeader) == 64, "samples file header is 64 bytes");

}  // namespace

void SampleStore::write_file(const std::string &path, SampleKind kind, int64_t start_ns) const {
  write_samples_file(path, kind, start_ns, {this});
}

void write_samples_file(const std::string &path, SampleKind kind, int64_t start_ns,
                        const std::vector<const SampleStore *> &stores) {
  std::vector<SampleRecord> records;
  for (const SampleStore *s : stores) records.insert(records.end(), s->begin(), s->end());
  SamplesFileHeader h{};
  std::memcpy(h.magic, "PSBSMP01", 8);
  h.version = 2;
  h.record_size = sizeof(SampleRecord);
  h.count = records.size();
  h.kind = uint32_t(kind);
  h.start_ns = start_ns;
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f)
    throw std::runtime_error("cannot write samples file " + path + ": " + std::strerror(errno));
  bool ok = std::fwrite(&h, sizeof h, 1, f.get()) == 1;
  if (!records.empty())
    ok = ok && std::fwrite(records.data(), sizeof(SampleRecord), records.size(), f.get()) ==
                   records.size();
  if (!ok || std::fflush(f.get()) != 0)
    throw std::runtime_error("failed writing samples file " + path + ": " + std::strerror(errno));
}

}  // namespace psb
