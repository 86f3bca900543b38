// The tests' driver configuration (a broker address, a notify mode, a QoS) and a context
// with at most one writer and one reader, all destroyed in the safe order.
#pragma once

#include <psbench/driver.h>

#include <string>

#include "driver_under_test.hpp"

namespace psb_test {

inline const psb_driver &redis() { return driver_under_test(); }

struct RedisConfig {
  RedisConfig(std::string broker, uint32_t notify, psb_qos qos, const char *run_id,
              uint64_t max_payload)
      : broker_(std::move(broker)), run_id_(run_id) {
    option_ = psb_option{"broker", broker_.c_str()};
    cfg.run_id = run_id_.c_str();
    cfg.transport = "tcp";
    cfg.notify = notify;
    cfg.qos = qos;
    cfg.max_payload = max_payload;
    cfg.options = &option_;
    cfg.option_count = 1;
  }
  RedisConfig(const RedisConfig &) = delete;
  psb_config cfg{};

 private:
  std::string broker_, run_id_;
  psb_option option_{};
};

struct Endpoints {
  explicit Endpoints(const RedisConfig &c) { ctx = redis().open(&c.cfg, &err); }
  ~Endpoints() {
    if (reader) redis().destroy_reader(reader);
    if (writer) redis().destroy_writer(writer);
    if (ctx) redis().close(ctx);
  }
  psb_context *ctx = nullptr;
  psb_writer *writer = nullptr;
  psb_reader *reader = nullptr;
  psb_error err{};
};

}  // namespace psb_test
