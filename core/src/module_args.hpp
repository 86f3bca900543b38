// The arguments of --role module (docs/graphs.md): which module of the graph this node
// runs, what activates it, what it reads and writes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace psb {

struct NodeConfig;

// What activates a module: its timer, any input, or all inputs.
enum class Trigger { timer, any, all };

struct ModuleInput {
  std::string topic;
  uint32_t writers = 1;  // modules writing it (end markers expected, matches waited for)
  // Closes a cycle of the graph (TOPIC:WRITERS:feedback): its end markers are not waited
  // for, since its writers end only after this module has.
  bool feedback = false;
};

struct ModuleOutput {
  std::string topic;
  uint64_t size = 0;     // whole message, header included
  uint32_t readers = 0;  // modules reading it (matches waited for)
};

struct ModuleArgs {
  std::string name;
  std::optional<uint32_t> id, sources, source_index;
  int64_t period_ns = 0;  // 0: activated by its inputs
  std::optional<Trigger> on;
  int64_t work_ns = 0;
  std::optional<int64_t> work_max_ns;
  std::vector<ModuleInput> inputs;
  std::vector<ModuleOutput> outputs;
  std::string first_given;  // the first module argument seen (refused without --role module)

  bool is_source() const { return inputs.empty(); }
  Trigger trigger() const { return on ? *on : period_ns > 0 ? Trigger::timer : Trigger::any; }
  // The most readers (writers) any of its topics has: what the driver is told.
  uint32_t max_readers() const;
  uint32_t max_writers() const;
};

// Takes arg when it is a module argument (reading its value with next_value): true if so.
// Throws UsageError naming the argument when its value is malformed.
template <typename NextValue>
bool parse_module_arg(std::string_view arg, NextValue next_value, ModuleArgs &m);
bool is_module_arg(std::string_view arg);
void parse_module_value(std::string_view arg, std::string_view value, ModuleArgs &m);

template <typename NextValue>
bool parse_module_arg(std::string_view arg, NextValue next_value, ModuleArgs &m) {
  if (!is_module_arg(arg)) return false;
  parse_module_value(arg, next_value(), m);
  return true;
}

// Checks a --role module configuration (or that no module argument is given to another
// role), and settles --size: the driver's max_payload. Throws UsageError.
void validate_module(NodeConfig &c, bool size_given);

const char *trigger_name(Trigger t);

}  // namespace psb
