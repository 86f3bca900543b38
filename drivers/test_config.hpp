// For a driver's GoogleTest: a psb_config filled as the node fills it, a bounded wait,
// and a context with one writer and one reader that close with it.
#pragma once
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "driver_under_test.hpp"
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

// A run id no other test process has: prefix, this process's id, a counter.
inline std::string fresh_run_id(const char *prefix) {
  static std::atomic<int> n{0};
  return prefix + std::to_string(getpid()) + "x" + std::to_string(n++);
}

// A psb_config that owns its strings (run id, transport, options): get() points c at
// them. Notify wait, reliable and volatile, history not set, unless the test says.
struct OwnedConfig {
  OwnedConfig(std::string run, std::string transport_name, uint64_t max_payload = 64,
              uint32_t notify = PSB_NOTIFY_WAIT, uint32_t reliability = PSB_RELIABLE)
      : run_id(std::move(run)), transport(std::move(transport_name)) {
    c.notify = notify;
    c.qos = psb_qos{reliability, PSB_VOLATILE, 0, 0};
    c.max_payload = max_payload;
  }
  OwnedConfig &option(const std::string &k, const std::string &v) {
    options.emplace_back(k, v);
    return *this;
  }
  const psb_config *get() { return filled(c, run_id, transport, options, opts); }

  std::string run_id, transport;
  std::vector<std::pair<std::string, std::string>> options;
  std::vector<psb_option> opts;
  psb_config c{};
};

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

// Closes what a test made of the driver under test in the safe order: readers, writers,
// then contexts (null ones skipped).
template <class Readers, class Writers, class Contexts>
void close_all(const Readers &readers, const Writers &writers, const Contexts &contexts) {
  const psb_driver &d = driver_under_test();
  for (psb_reader *r : readers)
    if (r != nullptr) d.destroy_reader(r);
  for (psb_writer *w : writers)
    if (w != nullptr) d.destroy_writer(w);
  for (psb_context *c : contexts)
    if (c != nullptr) d.close(c);
}

// Contexts, writers and readers of the driver under test made through it, destroyed with
// it: readers, writers, then contexts.
struct Owned {
  Owned() = default;
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { close_all(readers, writers, contexts); }
  psb_context *open(const psb_config *cfg) {
    psb_context *c = driver_under_test().open(cfg, &err);
    if (c != nullptr) contexts.push_back(c);
    return c;
  }
  psb_writer *writer(psb_context *ctx, const std::string &topic) {
    psb_writer *w = driver_under_test().create_writer(ctx, topic.c_str(), &err);
    if (w != nullptr) writers.push_back(w);
    return w;
  }
  psb_reader *reader(psb_context *ctx, const std::string &topic, psb_on_data cb = nullptr,
                     void *user = nullptr) {
    psb_reader *r = driver_under_test().create_reader(ctx, topic.c_str(), cb, user, &err);
    if (r != nullptr) readers.push_back(r);
    return r;
  }
  void drop_reader(psb_reader *r) {
    driver_under_test().destroy_reader(r);
    std::erase(readers, r);
  }
  void drop_writer(psb_writer *w) {
    driver_under_test().destroy_writer(w);
    std::erase(writers, w);
  }

  psb_error err{};
  std::vector<psb_context *> contexts;
  std::vector<psb_writer *> writers;
  std::vector<psb_reader *> readers;
};

// A context of the driver under test (opened by the deriving test) with a writer and a
// reader, each destroyed with it: the endpoints first, the context last.
struct Endpoints {
  Endpoints() = default;
  Endpoints(const Endpoints &) = delete;
  Endpoints &operator=(const Endpoints &) = delete;
  ~Endpoints() { close_all(std::array{reader}, std::array{writer}, std::array{ctx}); }
  psb_error err{};
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
};

}  // namespace psb_test
