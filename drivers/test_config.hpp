// For a driver's GoogleTest: a psb_config filled as the node fills it, and a bounded wait.
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "psbench/driver.h"

namespace psb_test {

// c with the run id, the transport and the options (KEY, VALUE pairs of strings), which
// must outlive it; opts holds the option array it points to. Returns &c.
template <class Options>
const psb_config *filled(psb_config &c, const std::string &run_id, const std::string &transport,
                         const Options &options, std::vector<psb_option> &opts) {
  opts.clear();
  for (const auto &[k, v] : options) opts.push_back({k.c_str(), v.c_str()});
  c.run_id = run_id.c_str();
  c.transport = transport.c_str();
  c.options = opts.empty() ? nullptr : opts.data();
  c.option_count = opts.size();
  return &c;
}

// Whether cond() came true (asked every millisecond) within seconds.
inline bool wait_until(const std::function<bool()> &cond, int seconds = 20) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A psb_config for a broker driver's run over tcp against one broker (option
// broker=ADDRESS:PORT, then any more options), pointing into its own strings: not copied.
class BrokerConfig {
  std::string run_id_, transport_ = "tcp";
  std::vector<std::pair<std::string, std::string>> options_;
  std::vector<psb_option> opts_;

 public:
  BrokerConfig(const std::string &broker, const char *run_id, uint32_t notify, uint32_t reliability,
               uint64_t max_payload,
               const std::vector<std::pair<std::string, std::string>> &more = {})
      : run_id_(run_id), options_{{"broker", broker}} {
    options_.insert(options_.end(), more.begin(), more.end());
    cfg.notify = notify;
    cfg.qos = psb_qos{reliability, PSB_VOLATILE, 0, 0};
    cfg.max_payload = max_payload;
    filled(cfg, run_id_, transport_, options_, opts_);
  }
  BrokerConfig(const BrokerConfig &) = delete;
  BrokerConfig &operator=(const BrokerConfig &) = delete;

  psb_config cfg{};
};

}  // namespace psb_test
