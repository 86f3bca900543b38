// For a driver's GoogleTest (psbench_add_driver_test): the driver built beside it,
// loaded through its ABI exactly as psbench-node loads it.
#pragma once
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "psbench/driver.h"

namespace psb_test {

inline const psb_driver &driver_under_test() {
  static const psb_driver *table = [] {
    void *h = dlopen(PSBENCH_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) throw std::runtime_error(dlerror());
    auto entry = reinterpret_cast<psb_driver_entry_fn>(dlsym(h, PSB_DRIVER_ENTRY_SYMBOL));
    if (entry == nullptr)
      throw std::runtime_error(std::string(PSBENCH_DRIVER_PATH) +
                               " has no " PSB_DRIVER_ENTRY_SYMBOL);
    return entry();
  }();
  return *table;
}

// check() as a test reads it: the number of refusals (0 = accepted), and every message in
// err, "; " between them.
inline int check(const psb_driver &d, const psb_config *cfg, psb_error *err) {
  err->message[0] = '\0';
  return d.check(
      cfg,
      [](void *user, const char *, const char *reason) {
        auto *e = static_cast<psb_error *>(user);
        const size_t used = std::strlen(e->message);
        std::snprintf(e->message + used, sizeof e->message - used, "%s%s", used ? "; " : "",
                      reason);
      },
      err);
}

// Every (setting, reason) check() reports, in its order.
inline std::vector<std::pair<std::string, std::string>> refusals(const psb_driver &d,
                                                                 const psb_config &cfg) {
  std::vector<std::pair<std::string, std::string>> got;
  d.check(
      &cfg,
      [](void *user, const char *setting, const char *reason) {
        static_cast<std::vector<std::pair<std::string, std::string>> *>(user)->emplace_back(setting,
                                                                                            reason);
      },
      &got);
  return got;
}

// What writer_counters() or reader_counters() hands over (empty when the driver has none).
template <class Endpoint>
std::map<std::string, uint64_t> counters_of(void (*counters)(Endpoint *, psb_put_counter, void *),
                                            Endpoint *endpoint) {
  std::map<std::string, uint64_t> got;
  if (counters == nullptr) return got;
  counters(
      endpoint,
      [](void *user, const char *name, uint64_t value) {
        (*static_cast<std::map<std::string, uint64_t> *>(user))[name] = value;
      },
      &got);
  return got;
}
inline std::map<std::string, uint64_t> counters_of(const psb_driver &d, psb_writer *w) {
  return counters_of(d.writer_counters, w);
}
inline std::map<std::string, uint64_t> counters_of(const psb_driver &d, psb_reader *r) {
  return counters_of(d.reader_counters, r);
}

}  // namespace psb_test
