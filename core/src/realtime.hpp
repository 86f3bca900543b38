// The settings that change latency by up to 10x on these machines: CPU pinning,
// SCHED_FIFO, mlockall, /dev/cpu_dma_latency. Each either applies or throws; none is
// silently skipped.
#pragma once
#include <stdexcept>
#include <string>

namespace psb {

struct RealtimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void pin_current_thread(int cpu);            // throws RealtimeError
void set_current_thread_fifo(int priority);  // throws RealtimeError
void lock_all_memory();                      // throws RealtimeError

// Holds /dev/cpu_dma_latency at 0 (no deep C-states) while alive.
class DmaLatencyHold {
 public:
  DmaLatencyHold();  // throws RealtimeError
  ~DmaLatencyHold();
  DmaLatencyHold(const DmaLatencyHold &) = delete;
  DmaLatencyHold &operator=(const DmaLatencyHold &) = delete;

 private:
  int fd_ = -1;
};

}  // namespace psb
