// The three record streams of a module (NAME.activations, NAME.origins, NAME.arrivals;
// docs/graphs.md) and what a module counts. Each stream is allocated and touched before
// the run; one that fills up stops recording and counts what it could not keep.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "module_args.hpp"

namespace psb {

constexpr uint32_t kTimerTrigger = 0xFFFFFFFFu;
constexpr uint32_t kActivationOverrun = 1;  // the work ran past the next tick

struct ActivationRecord {
  uint64_t activation;
  int64_t scheduled_ns;  // timer: the tick it was due; else the arrival that activated it
  int64_t start_ns;
  int64_t end_ns;    // work done, outputs written
  uint32_t trigger;  // input index, or kTimerTrigger
  uint32_t flags;    // kActivationOverrun
};
static_assert(sizeof(ActivationRecord) == 40, "part of the NAME.activations format");

struct OriginRecord {
  uint64_t activation;
  uint64_t newest_seq;
  int64_t newest_ns;
  int64_t oldest_ns;
  uint32_t source;
  uint32_t reserved;
};
static_assert(sizeof(OriginRecord) == 40, "part of the NAME.origins format");

struct ArrivalRecord {
  uint64_t seq;
  int64_t send_ns;
  int64_t arrival_ns;
  uint32_t input;   // index of --input
  uint32_t writer;  // the writer's module id
};
static_assert(sizeof(ArrivalRecord) == 32, "part of the NAME.arrivals format");

template <typename Record>
class RecordStream {
 public:
  explicit RecordStream(uint64_t capacity) : records_(capacity, Record{}) {}
  void add(const Record &r) {
    if (kept_ == records_.size()) {
      ++beyond_capacity_;
      return;
    }
    records_[kept_++] = r;
  }
  uint64_t kept() const { return kept_; }
  uint64_t beyond_capacity() const { return beyond_capacity_; }
  const Record *data() const { return records_.data(); }

 private:
  std::vector<Record> records_;
  uint64_t kept_ = 0, beyond_capacity_ = 0;
};

struct InputCounts {
  uint64_t received = 0;  // measured messages taken (duplicates and corrupted left out)
  uint64_t warmup = 0;
  uint64_t lost = 0;  // gaps in each writer's seq, and after its end marker what never came
  uint64_t duplicated = 0, corrupted = 0;
  uint64_t end_markers = 0;  // writers whose end marker came (of --input's WRITERS)
  uint64_t overflow = 0;     // dropped because the role thread was 1024 messages behind
};

struct OutputCounts {
  uint64_t sent = 0, warmup = 0, write_errors = 0;
};

// What a module leaves behind, beside the common RoleResult.
struct ModuleResult {
  explicit ModuleResult(uint64_t capacity, uint32_t sources)
      : activations(capacity), origins(capacity * sources), arrivals(capacity) {}
  RecordStream<ActivationRecord> activations;
  RecordStream<OriginRecord> origins;
  RecordStream<ArrivalRecord> arrivals;
  uint64_t activation_count = 0, overruns = 0, warmup = 0;
  std::vector<InputCounts> inputs;
  std::vector<OutputCounts> outputs;
};

// Writes NAME.activations, NAME.origins and NAME.arrivals into dir. Throws
// std::runtime_error.
void write_module_records(const std::string &dir, const std::string &name, const ModuleResult &m,
                          uint32_t module_id, uint32_t sources, int64_t start_ns);

}  // namespace psb
