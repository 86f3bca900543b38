// Preallocated store of latency samples, kept in arrival order with their sequence
// numbers: the first `capacity` distinct arrivals, whatever their numbers (arrivals
// past that are counted, never mistaken for losses). It also counts what arrives twice
// or out of order. Recording is the only thing the timed path does with it: no
// allocation, no lock.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "seq_window.hpp"

namespace psb {

// Record flags.
constexpr uint32_t kRecordLate = 1;  // ping: the echo came after --sample-timeout

struct SampleRecord {
  uint64_t seq;
  int64_t intended_ns;  // when the message was due (closed loop: when its write began)
  int64_t latency_ns;   // arrival - intended_ns, or - send_ns with --latency-from send
  int64_t send_ns;      // when its write began
  uint32_t flags;       // kRecord*
  uint32_t writer;      // the writer's id (sub with several publishers)
};
static_assert(sizeof(SampleRecord) == 40, "record layout is part of the samples file format");

enum class SampleKind : uint32_t { rtt = 1, one_way = 2 };

class SampleStore {
 public:
  enum class Outcome { recorded, duplicate, beyond_capacity };

  // Allocates and touches all memory now so recording never page-faults.
  explicit SampleStore(uint64_t capacity);

  Outcome record(const SampleRecord &r) {
    switch (window_.mark(r.seq)) {
      case SeqWindow::Seen::duplicate:
        ++duplicated_;
        return Outcome::duplicate;
      case SeqWindow::Seen::too_old:
        ++unchecked_;
        break;
      case SeqWindow::Seen::first:
        break;
    }
    if (distinct_ > 0 && r.seq < highest_) ++reordered_;
    if (distinct_ == 0 || r.seq > highest_) highest_ = r.seq;
    ++distinct_;
    published_distinct_.store(distinct_, std::memory_order_release);
    if (recorded_ == capacity_) {
      ++beyond_capacity_;
      return Outcome::beyond_capacity;
    }
    records_[recorded_++] = r;
    published_recorded_.store(recorded_, std::memory_order_release);
    if (r.flags & kRecordLate) ++late_;
    return Outcome::recorded;
  }

  uint64_t capacity() const { return capacity_; }
  uint64_t recorded() const { return recorded_; }
  // Distinct measured arrivals: recorded + beyond_capacity.
  uint64_t distinct() const { return distinct_; }
  uint64_t beyond_capacity() const { return beyond_capacity_; }
  uint64_t duplicated() const { return duplicated_; }
  uint64_t reordered() const { return reordered_; }
  uint64_t late() const { return late_; }
  // Arrivals more than SeqWindow::kWindow numbers behind the highest: counted as
  // distinct, though a duplicate among them could not be told.
  uint64_t unchecked() const { return unchecked_; }
  // For another thread while records arrive (progress lines): how many are recorded and
  // distinct so far; records [0, published_recorded()) may be read. A release store per
  // sample, a plain store on x86.
  uint64_t published_recorded() const {
    return published_recorded_.load(std::memory_order_acquire);
  }
  uint64_t published_distinct() const {
    return published_distinct_.load(std::memory_order_acquire);
  }
  const SampleRecord *begin() const { return records_.data(); }
  const SampleRecord *end() const { return records_.data() + recorded_; }
  // The last record kept (when the store filled up: where the kept part of the run ends).
  const SampleRecord *last() const { return recorded_ ? &records_[recorded_ - 1] : nullptr; }

  // Writes the samples file described in docs/node.md. Throws std::runtime_error.
  void write_file(const std::string &path, SampleKind kind, int64_t start_ns) const;

 private:
  uint64_t capacity_;
  std::vector<SampleRecord> records_;
  SeqWindow window_;
  uint64_t recorded_ = 0, distinct_ = 0, beyond_capacity_ = 0, duplicated_ = 0, reordered_ = 0,
           late_ = 0, unchecked_ = 0, highest_ = 0;
  std::atomic<uint64_t> published_recorded_{0}, published_distinct_{0};
};

// One samples file holding the records of several stores, one after the other (sub with
// several publishers: writer 0's records in arrival order, then writer 1's, ...).
void write_samples_file(const std::string &path, SampleKind kind, int64_t start_ns,
                        const std::vector<const SampleStore *> &stores);

}  // namespace psb
