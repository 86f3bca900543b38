// Where the roles of one process meet before measuring: each reports that its
// endpoints are ready (or failed); the main thread then runs the cross-process barrier
// and opens (or aborts) the gate for all of them.
#pragma once
#include <condition_variable>
#include <mutex>

namespace psb {

class StartGate {
 public:
  explicit StartGate(int roles) : expected_(roles) {}

  // Role thread: report readiness, then block until the gate opens. True = measure.
  bool arrive_and_wait(bool ready);
  // Main thread: block until every role arrived. True if all are ready.
  bool wait_all_arrived();
  void release(bool go);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int expected_, arrived_ = 0;
  bool all_ready_ = true, released_ = false, go_ = false;
};

}  // namespace psb
