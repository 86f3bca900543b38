// What one module does on its role thread (docs/graphs.md): take its inputs' messages,
// decide when to activate (timer, any, all), merge the origin tables of what an
// activation used, do the work, write the outputs and record. Everything is allocated
// in the constructor: on_arrival() and activate() neither allocate, log, lock nor format.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph_message.hpp"
#include "message.hpp"
#include "module_inbox.hpp"
#include "module_records.hpp"
#include "role.hpp"
#include "seq_window.hpp"

namespace psb {

// The busy work of each activation: --work, or drawn uniformly in [--work, --work-max]
// by splitmix64 seeded with --module-id (the same sequence every run, every libc).
class WorkDraw {
 public:
  WorkDraw(int64_t lo, int64_t hi, uint64_t seed)
      : lo_(lo), span_(uint64_t(hi - lo) + 1), x_(seed) {}
  int64_t next() {
    if (span_ == 1) return lo_;
    uint64_t z = (x_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return lo_ + int64_t((z ^ (z >> 31)) % span_);
  }

 private:
  int64_t lo_;
  uint64_t span_, x_;
};

class ModuleCore {
 public:
  ModuleCore(const RoleEnv &env, RoleResult &res, ModuleResult &out);

  // One message taken on input i at t (role thread). May activate the module.
  void on_arrival(size_t i, const uint8_t *data, uint64_t len, int64_t t);
  // One activation: trigger is an input index or kTimerTrigger.
  void activate(uint32_t trigger, int64_t scheduled_ns);
  // Every input but the feedback ones has brought the end marker of each of its writers.
  bool inputs_ended() const { return ended_inputs_ == awaited_inputs_; }
  // Lets the driver send what it holds (bounded by --drain-timeout), then writes the end
  // marker on every output, three times (1, 5, 20 ms apart) as pub does.
  void end_outputs();
  // After the run: each input's losses and overflows into the counts.
  void settle_counts();

  void attach_writer(size_t o, psb_writer *w) { outputs_[o].writer = w; }
  Inbox *inbox(size_t i) { return inputs_[i].inbox.get(); }
  void make_inboxes();
  const std::string &first_write_error() const { return first_write_error_; }

 private:
  struct WriterSlot {
    bool used = false, ended = false;
    uint32_t id = 0;
    uint64_t end_seq = 0, next_seq = 0, distinct = 0;
    SeqWindow window;
  };
  struct InputState {
    std::vector<std::unique_ptr<WriterSlot>> writers;  // --input's WRITERS of them
    std::vector<OriginEntry> latest;                   // origin table of the newest message
    bool has = false, fresh = false, warm = false;
    std::unique_ptr<Inbox> inbox;  // listener or receiver thread to role thread
  };
  struct OutputState {
    psb_writer *writer = nullptr;
    std::vector<uint8_t> buf;
    uint64_t seq = 0;  // messages written on it (warm-up ones included)
  };

  WriterSlot *writer_slot(InputState &in, uint32_t id);
  void write_outputs(uint64_t activation, int64_t start_ns, bool warm);

  const RoleEnv &env_;
  RoleResult &res_;
  ModuleResult &out_;
  const ModuleArgs &m_;
  const uint32_t sources_;
  std::vector<InputState> inputs_;
  std::vector<OutputState> outputs_;
  std::vector<OriginEntry> merged_;
  size_t ended_inputs_ = 0;
  size_t awaited_inputs_ = 0;  // the inputs that are not feedback
  const uint64_t warmup_;      // --warmup: every source's first activations
  uint64_t activation_ = 0;    // every activation, warm-up ones included
  WorkDraw work_;
  std::string first_write_error_;
};

}  // namespace psb
