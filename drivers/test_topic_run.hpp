// For a driver's GoogleTest: one process's view of a run whose topics may be listed
// (psb_config.run_topics, ABI 8): its config, its context, and the endpoints made in it,
// destroyed readers first, the context last.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"
#include "test_config.hpp"

namespace psb_test {

struct TopicRun {
  // names: the run's topics; listed: whether the config lists them (run_topics).
  TopicRun(std::string id, std::vector<std::string> topics, bool listed, const char *transport)
      : run_id(std::move(id)), names(std::move(topics)) {
    for (const std::string &n : names) pointers.push_back(n.c_str());
    cfg.run_id = run_id.c_str();
    cfg.transport = transport;
    cfg.notify = PSB_NOTIFY_WAIT;
    cfg.qos = psb_qos{PSB_BEST_EFFORT, PSB_VOLATILE, 0, 0};
    cfg.max_payload = 64;
    cfg.readers = cfg.writers = 1;
    if (listed && !pointers.empty()) {
      cfg.run_topics = pointers.data();
      cfg.run_topic_count = uint32_t(pointers.size());
    }
  }
  TopicRun(const TopicRun &) = delete;
  TopicRun &operator=(const TopicRun &) = delete;
  ~TopicRun() { close_all(readers, writers, std::array{ctx}); }
  psb_reader *reader(const std::string &topic) {
    psb_reader *r = driver_under_test().create_reader(ctx, topic.c_str(), nullptr, nullptr, &err);
    if (r != nullptr) readers.push_back(r);
    return r;
  }
  psb_writer *writer(const std::string &topic) {
    psb_writer *w = driver_under_test().create_writer(ctx, topic.c_str(), &err);
    if (w != nullptr) writers.push_back(w);
    return w;
  }

  std::string run_id;
  std::vector<std::string> names;
  std::vector<const char *> pointers;
  psb_config cfg{};
  psb_error err{};
  psb_context *ctx = nullptr;
  std::vector<psb_reader *> readers;
  std::vector<psb_writer *> writers;
};

}  // namespace psb_test
