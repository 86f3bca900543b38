#include "start_gate.hpp"

namespace psb {

bool StartGate::arrive_and_wait(bool ready) {
  std::unique_lock lock(mu_);
  ++arrived_;
  all_ready_ = all_ready_ && ready;
  cv_.notify_all();
  cv_.wait(lock, [&] { return released_; });
  return go_;
}

bool StartGate::wait_all_arrived() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return arrived_ == expected_; });
  return all_ready_;
}

void StartGate::release(bool go) {
  std::lock_guard lock(mu_);
  released_ = true;
  go_ = go;
  cv_.notify_all();
}

}  // namespace psb
