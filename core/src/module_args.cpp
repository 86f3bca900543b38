#include "module_args.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "config.hpp"
#include "graph_message.hpp"
#include "named.hpp"

namespace psb {
namespace {

constexpr Named<Trigger> kTriggers[] = {
    {"timer", Trigger::timer}, {"any", Trigger::any}, {"all", Trigger::all}};

uint64_t whole(std::string_view arg, std::string_view v, const char *what) {
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size())
    throw UsageError(std::string(arg) + ": '" + std::string(v) + "' is not a whole number" + what);
  return out;
}

uint32_t whole32(std::string_view arg, std::string_view v, const char *what) {
  uint64_t out = whole(arg, v, what);
  if (out > 0xFFFFFFFFu)
    throw UsageError(std::string(arg) + ": '" + std::string(v) + "' is too large");
  return uint32_t(out);
}

// TOPIC:A[:B]: the parts between colons.
std::vector<std::string_view> fields(std::string_view v) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t colon = v.find(':', start);
    out.push_back(v.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) return out;
    start = colon + 1;
  }
}

void check_topic(std::string_view arg, std::string_view topic, const char *form) {
  bool ok = !topic.empty();
  for (char ch : topic) ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!ok)
    throw UsageError(std::string(arg) + ": topic '" + std::string(topic) +
                     "' must be letters, digits and '_'; use " + form);
}

}  // namespace

uint32_t ModuleArgs::max_readers() const {
  uint32_t n = 1;
  for (auto &o : outputs) n = std::max(n, o.readers);
  return n;
}

uint32_t ModuleArgs::max_writers() const {
  uint32_t n = 1;
  for (auto &i : inputs) n = std::max(n, i.writers);
  return n;
}

bool is_module_arg(std::string_view arg) {
  for (const char *a : {"--module", "--module-id", "--sources", "--source-index", "--period",
                        "--on", "--work", "--work-max", "--input", "--output"})
    if (arg == a) return true;
  return false;
}

void parse_module_value(std::string_view arg, std::string_view v, ModuleArgs &m) {
  if (m.first_given.empty()) m.first_given = std::string(arg);
  if (arg == "--module") {
    m.name = std::string(v);
  } else if (arg == "--module-id") {
    m.id = whole32(arg, v, " (the module's index in the graph, 0..65535)");
  } else if (arg == "--sources") {
    m.sources = whole32(arg, v, " (the graph's number of source modules)");
  } else if (arg == "--source-index") {
    m.source_index = whole32(arg, v, " (this source's index, 0..--sources - 1)");
  } else if (arg == "--period") {
    m.period_ns = int64_t(whole(arg, v, " of nanoseconds (0: activated by its inputs)"));
  } else if (arg == "--on") {
    m.on = parse_named(kTriggers, arg, v);
  } else if (arg == "--work") {
    m.work_ns = int64_t(whole(arg, v, " of nanoseconds"));
  } else if (arg == "--work-max") {
    m.work_max_ns = int64_t(whole(arg, v, " of nanoseconds"));
  } else if (arg == "--input") {
    auto f = fields(v);
    if (f.size() != 2 && !(f.size() == 3 && f[2] == "feedback"))
      throw UsageError("--input: '" + std::string(v) +
                       "' is not TOPIC:WRITERS[:feedback], e.g. scan:1");
    check_topic(arg, f[0], "TOPIC:WRITERS, e.g. scan:1");
    ModuleInput in{std::string(f[0]), whole32(arg, f[1], " of writers in TOPIC:WRITERS"),
                   f.size() == 3};
    if (in.writers == 0)
      throw UsageError("--input: " + in.topic + " needs at least 1 writer (TOPIC:WRITERS)");
    m.inputs.push_back(in);
  } else if (arg == "--output") {
    auto f = fields(v);
    if (f.size() != 3)
      throw UsageError("--output: '" + std::string(v) +
                       "' is not TOPIC:SIZE:READERS, e.g. pose:256:2");
    check_topic(arg, f[0], "TOPIC:SIZE:READERS, e.g. pose:256:2");
    m.outputs.push_back(ModuleOutput{std::string(f[0]),
                                     whole(arg, f[1], " of bytes in TOPIC:SIZE:READERS"),
                                     whole32(arg, f[2], " of readers in TOPIC:SIZE:READERS")});
  }
}

const char *trigger_name(Trigger t) { return name_of(kTriggers, t); }

namespace {

void refuse_other_roles_settings(const NodeConfig &c) {
  auto no = [](bool given, const char *arg, const char *why) {
    if (given) throw UsageError(std::string(arg) + ": not with --role module; " + why);
  };
  no(c.rate_hz != 0, "--rate", "a module's timing is --period (a source) or its inputs");
  no(c.subscribers != 1, "--subscribers",
     "give each output's readers in --output TOPIC:SIZE:READERS");
  no(c.publishers != 1, "--publishers", "give each input's writers in --input TOPIC:WRITERS");
  no(c.loan, "--loan", "a module writes from its own buffer");
  no(c.check_pattern, "--check-pattern", "a module's payload after the origin table is zeros");
  no(!c.name.empty(), "--name", "a module's files are named by --module NAME");
}

}  // namespace

void validate_module(NodeConfig &c, bool size_given) {
  ModuleArgs &m = c.module;
  if (!c.runs(Role::module)) {
    if (!m.first_given.empty())
      throw UsageError(m.first_given + ": belongs to --role module (one module of a graph)");
    return;
  }
  if (c.roles.size() != 1)
    throw UsageError("--role module: a module runs alone in its process; give --role module only");
  refuse_other_roles_settings(c);
  if (m.name.empty())
    throw UsageError(
        "--module: required with --role module (the module's name; its files are "
        "NAME.json, NAME.activations, NAME.origins, NAME.arrivals)");
  for (char ch : m.name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
      throw UsageError("--module: '" + m.name + "': use letters, digits, '-' and '_' only");
  if (!m.id) throw UsageError("--module-id: required with --role module (its index in the graph)");
  if (*m.id > 0xFFFF)
    throw UsageError("--module-id: " + std::to_string(*m.id) + " is out of range; use 0..65535");
  if (!m.sources)
    throw UsageError("--sources: required with --role module (the graph's number of sources)");
  const uint32_t s = *m.sources;
  if (s == 0 || s > 0xFFFF)
    throw UsageError("--sources: " + std::to_string(s) + " is out of range; use 1..65535");
  if (m.is_source()) {
    if (!m.source_index)
      throw UsageError(
          "--source-index: required for a source (a module without --input); use "
          "0.." +
          std::to_string(s - 1));
    if (*m.source_index >= s)
      throw UsageError("--source-index: " + std::to_string(*m.source_index) +
                       " is not a source of a graph of --sources " + std::to_string(s) +
                       "; use 0.." + std::to_string(s - 1));
    if (m.period_ns <= 0)
      throw UsageError(
          "--period: a source (a module without --input) runs on its timer; give "
          "--period NS above 0");
    if (m.on && *m.on != Trigger::timer)
      throw UsageError("--on: a source has no inputs; it runs on its timer (--on timer)");
  } else {
    if (m.source_index)
      throw UsageError("--source-index: only a module without --input is a source; leave it out");
    if (std::all_of(m.inputs.begin(), m.inputs.end(), [](auto &in) { return in.feedback; }))
      throw UsageError(
          "--input: every input is :feedback; a module ends once its other inputs have, so "
          "at least one must not be");
    if (m.trigger() == Trigger::timer && m.period_ns <= 0)
      throw UsageError("--on timer: needs --period NS above 0");
    if (m.trigger() != Trigger::timer && m.period_ns > 0)
      throw UsageError(std::string("--period: with --on ") + trigger_name(m.trigger()) +
                       " the module is activated by its inputs; leave --period out, or use --on "
                       "timer");
  }
  if (m.work_max_ns && *m.work_max_ns < m.work_ns)
    throw UsageError("--work-max: " + std::to_string(*m.work_max_ns) + " is below --work " +
                     std::to_string(m.work_ns) + "; the work is drawn in [--work, --work-max]");
  std::vector<std::string> topics;
  for (auto &in : m.inputs) topics.push_back(in.topic);
  for (auto &out : m.outputs) topics.push_back(out.topic);
  for (size_t i = 0; i < topics.size(); ++i)
    for (size_t j = i + 1; j < topics.size(); ++j)
      if (topics[i] == topics[j])
        throw UsageError("--input/--output: topic '" + topics[i] +
                         "' is given twice; a module reads or writes each topic once");
  const uint64_t smallest = graph_message_size(s);
  // The driver sizes its buffers by the run's largest message (udp's reassembly, shm's
  // ring slots, which must be equal at both ends of a topic): every module of a run is
  // given the same --size, so that a reader can take what any writer sends.
  if (!size_given)
    throw UsageError(
        "--size: required with --role module: the run's largest message (the "
        "largest --output SIZE of the graph), the same for every module of the run");
  if (c.size < smallest)
    throw UsageError("--size: " + std::to_string(c.size) + " cannot hold a message of a graph of " +
                     std::to_string(s) + " sources; use at least " + std::to_string(smallest) +
                     " (48 + 32 x sources)");
  for (auto &out : m.outputs) {
    if (out.size < smallest)
      throw UsageError("--output: " + out.topic + ": SIZE " + std::to_string(out.size) +
                       " cannot hold the origin table; with --sources " + std::to_string(s) +
                       " use at least " + std::to_string(smallest) + " (48 + 32 x sources)");
    if (out.size > c.size)
      throw UsageError("--output: " + out.topic + ": SIZE " + std::to_string(out.size) +
                       " is over --size " + std::to_string(c.size) +
                       " (the run's largest message); raise --size");
  }
}

}  // namespace psb
