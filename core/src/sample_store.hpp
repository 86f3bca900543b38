// Preallocated store of latency samples, indexed by sequence number, which also counts
// what arrives twice or out of order. Recording is the only thing the timed path does
// with it: no allocation, no lock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace psb {

struct SampleRecord {
  uint64_t seq;
  int64_t intended_ns;
  int64_t latency_ns;
};
static_assert(sizeof(SampleRecord) == 24, "record layout is part of the samples file format");

enum class SampleKind : uint32_t { rtt = 1, one_way = 2 };

class SampleStore {
 public:
  enum class Outcome { recorded, duplicate, out_of_range };

  // Allocates and touches all memory now so recording never page-faults.
  explicit SampleStore(uint64_t capacity);

  Outcome record(uint64_t seq, int64_t intended_ns, int64_t latency_ns) {
    return record_at(seq, seq, intended_ns, latency_ns);
  }
  // Records seq in slot (slots in increasing seq order): a store of every Nth sequence
  // number (pub's echoes) puts seq in slot seq / N.
  Outcome record_at(uint64_t slot, uint64_t seq, int64_t intended_ns, int64_t latency_ns) {
    if (slot >= capacity_) return Outcome::out_of_range;
    if (present_[slot]) {
      ++duplicated_;
      return Outcome::duplicate;
    }
    if (recorded_ > 0 && seq < highest_seq_) ++reordered_;
    if (recorded_ == 0 || seq > highest_seq_) highest_seq_ = seq;
    present_[slot] = 1;
    records_[slot] = SampleRecord{seq, intended_ns, latency_ns};
    ++recorded_;
    return Outcome::recorded;
  }

  bool has(uint64_t slot) const { return slot < capacity_ && present_[slot]; }
  uint64_t capacity() const { return capacity_; }
  uint64_t recorded() const { return recorded_; }
  uint64_t duplicated() const { return duplicated_; }
  uint64_t reordered() const { return reordered_; }
  // One past the highest sequence number seen: a lower bound of what was sent.
  uint64_t seen_span() const { return recorded_ ? highest_seq_ + 1 : 0; }

  // Records in sequence order, lost ones left out.
  std::vector<SampleRecord> collect() const;

  // Writes the samples file described in docs/node.md. Throws std::runtime_error.
  void write_file(const std::string &path, SampleKind kind, int64_t start_ns) const;

 private:
  uint64_t capacity_;
  std::vector<SampleRecord> records_;
  std::vector<uint8_t> present_;
  uint64_t recorded_ = 0, duplicated_ = 0, reordered_ = 0, highest_seq_ = 0;
};

// One samples file holding the records of several stores, one after the other (sub with
// several publishers: writer 0's records in sequence order, then writer 1's, ...).
void write_samples_file(const std::string &path, SampleKind kind, int64_t start_ns,
                        const std::vector<const SampleStore *> &stores);

}  // namespace psb
