#include "check_mode.hpp"

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "driver_loader.hpp"
#include "refusals.hpp"

namespace psb {
namespace {

// Each driver loaded once, whatever the number of configurations checked against it.
using DriverCache = std::map<std::string, std::unique_ptr<LoadedDriver>>;

std::vector<Refusal> check_args(const std::vector<std::string> &args, DriverCache &drivers) {
  // --check: a configuration to judge, not a run (no --out needed).
  std::vector<const char *> argv{"psbench-node", "--check"};
  for (const std::string &a : args) argv.push_back(a.c_str());
  NodeConfig node;
  try {
    node = parse_args(int(argv.size()), argv.data());
  } catch (const UsageError &e) {
    return {{"arguments", e.what()}};
  }
  auto &loaded = drivers[node.driver_path];
  try {
    if (!loaded) loaded = std::make_unique<LoadedDriver>(node.driver_path);
  } catch (const RefusedError &e) {
    drivers.erase(node.driver_path);
    return {{"driver", e.what()}};
  }
  DriverConfig dcfg(node, loaded->table().caps);
  return refusals(*loaded, node, dcfg.get());
}

}  // namespace

int run_check(int argc, const char *const *argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool json = false;
  for (const std::string &a : args) json |= (a == "--json");
  DriverCache drivers;
  const std::vector<Refusal> found = check_args(args, drivers);
  if (json) {
    std::printf("%s\n", refusals_json(found).c_str());
  } else if (found.empty()) {
    std::printf("accepted\n");
  } else {
    for (const Refusal &r : found)
      std::printf("refused (%s): %s\n", r.setting.c_str(), r.message.c_str());
  }
  return found.empty() ? 0 : 2;
}

int run_check_stdin() {
  // Each request: its arguments, each ended by a NUL byte, and one more NUL at the end.
  DriverCache drivers;
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(std::cin, arg, '\0')) {
    if (!arg.empty()) {
      args.push_back(arg);
      continue;
    }
    std::printf("%s\n", refusals_json(check_args(args, drivers)).c_str());
    std::fflush(stdout);
    args.clear();
  }
  return 0;
}

}  // namespace psb
