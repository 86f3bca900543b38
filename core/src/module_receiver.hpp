// A module's input in wait mode when it has several: the ABI's take() waits on one
// reader, and a context's endpoints are used by one thread at a time, so each input
// gets a thread with a driver context of its own that blocks in take() and hands every
// message to the role thread through an Inbox. Setup (open, create the reader, wait for
// its writers) runs before the start barrier; the role waits for it with wait_ready().
#pragma once
#include <atomic>
#include <string>
#include <thread>

#include "module_inbox.hpp"
#include "role.hpp"

namespace psb {

class InputReceiver {
 public:
  InputReceiver(const RoleEnv &env, std::string topic, int writers, Inbox &inbox,
                ArrivalSignal &signal);
  ~InputReceiver() { stop(); }

  // True once the reader exists and (where the driver can tell) its writers matched;
  // false when setting up failed (error() says why).
  bool wait_ready();
  bool matched_known() const { return matched_known_; }  // after wait_ready()
  void stop();                                           // ends taking and joins
  const std::string &error() const { return error_; }    // after stop() or a failed setup
  const MiddlewareCounters &counters() const { return counters_; }  // after stop()

 private:
  enum : uint32_t { kSettingUp, kReady, kFailed };
  void run();
  void set_state(uint32_t s);

  const RoleEnv &env_;
  std::string topic_;
  int writers_;
  Inbox &inbox_;
  ArrivalSignal &signal_;
  std::string error_;
  MiddlewareCounters counters_;
  bool matched_known_ = false;
  std::atomic<uint32_t> state_{kSettingUp}, stop_{0};
  std::thread thread_;
};

}  // namespace psb
