// Loads a driver shared library and checks its ABI version; describes it. What it
// refuses: refusals.hpp.
#pragma once
#include <psbench/driver.h>

#include <string>
#include <vector>

#include "config.hpp"

namespace psb {

// A driver that cannot be loaded or a setting it refuses (exit code 2).
struct RefusedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class LoadedDriver {
 public:
  explicit LoadedDriver(const std::string &path);  // throws RefusedError
  ~LoadedDriver();
  LoadedDriver(const LoadedDriver &) = delete;
  LoadedDriver &operator=(const LoadedDriver &) = delete;

  const psb_driver &table() const { return *table_; }
  const std::string &path() const { return path_; }
  std::string version() const;
  bool loans() const;  // zero-copy writes: loan() and write_loan() are both there

 private:
  void *handle_ = nullptr;
  const psb_driver *table_ = nullptr;
  std::string path_;
};

// The psb_config for a run, owning the strings it points to.
class DriverConfig {
 public:
  DriverConfig(const NodeConfig &node, const psb_capabilities &caps);
  DriverConfig(const DriverConfig &) = delete;  // cfg_ points into its own members
  DriverConfig &operator=(const DriverConfig &) = delete;
  const psb_config &get() const { return cfg_; }
  const std::string &transport() const { return transport_; }

 private:
  std::string run_id_, transport_;
  std::vector<psb_option> options_;
  std::string address_;
  std::vector<std::string> peer_strings_;
  std::vector<const char *> peers_;             // NULL-terminated, into peer_strings_
  std::vector<std::string> run_topic_strings_;  // psb_<run>_<suffix>
  std::vector<const char *> run_topics_;        // into run_topic_strings_
  psb_config cfg_{};
};

// Names of the bits set in a capability set, e.g. "best_effort|reliable".
std::vector<std::string> reliability_names(uint32_t set);
std::vector<std::string> durability_names(uint32_t set);
std::vector<std::string> history_names(uint32_t set);
std::vector<std::string> notify_names(uint32_t set);
std::vector<std::string> string_list(const char *const *list);

// Driver messages start with the driver's name by convention; adds it where missing.
std::string with_driver_name(const char *name, const std::string &message);

std::string describe_json(const LoadedDriver &driver);

}  // namespace psb
