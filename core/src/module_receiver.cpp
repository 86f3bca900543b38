#include "module_receiver.hpp"

#include <stdexcept>

namespace psb {

InputReceiver::InputReceiver(const RoleEnv &env, std::string topic, int writers, Inbox &inbox,
                             ArrivalSignal &signal)
    : env_(env), topic_(std::move(topic)), writers_(writers), inbox_(inbox), signal_(signal) {
  thread_ = std::thread([this] { run(); });
}

bool InputReceiver::wait_ready() {
  for (;;) {
    uint32_t s = state_.load(std::memory_order_acquire);
    if (s != kSettingUp) return s == kReady;
    futex_wait(&state_, s, 100'000'000);
  }
}

void InputReceiver::stop() {
  if (!thread_.joinable()) return;
  stop_.store(1, std::memory_order_release);
  thread_.join();
}

void InputReceiver::set_state(uint32_t s) {
  state_.store(s, std::memory_order_release);
  futex_wake_all(&state_);
}

void InputReceiver::run() {
  try {
    Endpoints ep(env_.driver);
    ep.open(env_.cfg);
    ep.create_reader(topic_, nullptr, nullptr);
    matched_known_ = wait_until_matched(
        env_, [&] { return ep.matched_writers(); }, writers_, "writers of " + topic_);
    set_state(kReady);
    // Bounded waits so that stop() is seen within 50 ms.
    while (!stop_.load(std::memory_order_acquire)) {
      const void *data;
      size_t len;
      psb_error err;
      int r = env_.driver.take(ep.reader(), 50'000'000, &data, &len, &err);
      if (r < 0) throw std::runtime_error("receiving on " + topic_ + ": " + err.message);
      if (r == 1) {
        const int64_t t = now_ns();
        inbox_.push(data, len, t);
        if (env_.driver.release) env_.driver.release(ep.reader());
        signal_.notify();
      }
    }
    ep.destroy_reader();
    counters_ = ep.reader_counters();
  } catch (const std::exception &e) {
    error_ = e.what();
  }
  if (state_.load() == kSettingUp) set_state(kFailed);
}

}  // namespace psb
