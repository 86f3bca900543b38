// For a driver's GoogleTest (psbench_add_driver_test): the driver built beside it,
// loaded through its ABI exactly as psbench-node loads it.
#pragma once
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "psbench/driver.h"

namespace psb_test {

inline const psb_driver &driver_under_test() {
  static const psb_driver *table = [] {
    void *h = dlopen(PSBENCH_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) throw std::runtime_error(dlerror());
    auto entry = reinterpret_cast<psb_driver_entry_fn>(dlsym(h, PSB_DRIVER_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error(std::string(PSBENCH_DRIVER_PATH) + " has no " PSB_DRIVER_ENTRY_SYMBOL);
    return entry();
  }();
  return *table;
}

}  // namespace psb_test
