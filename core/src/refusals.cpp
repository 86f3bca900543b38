#include "refusals.hpp"

#include "json_writer.hpp"
#include "psbench/sdk_refusals.hpp"

namespace psb {
namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (auto &s : v) out += (out.empty() ? "" : "|") + s;
  return out.empty() ? "(none)" : out;
}

// Every refusal of the driver's check(), each message starting with the driver's name.
std::vector<Refusal> driver_refusals(const psb_driver &t, const psb_config &cfg) {
  std::vector<Refusal> found;
  if (!t.check) return found;
  const int count = t.check(
      &cfg,
      [](void *user, const char *setting, const char *reason) {
        static_cast<std::vector<Refusal> *>(user)->push_back(
            {setting && *setting ? setting : "driver", reason ? reason : ""});
      },
      &found);
  for (Refusal &r : found)
    if (r.message.empty()) r.message = "setting refused (driver gave no reason)";
  if (count > 0 && found.empty())  // counted, never reported: still refused
    found.push_back({"driver", "configuration refused (driver gave no reason)"});
  return found;
}

// The node's own checks against the driver's capabilities.
std::vector<Refusal> capability_refusals(const LoadedDriver &driver, const NodeConfig &node,
                                         const psb_config &cfg) {
  const psb_driver &t = driver.table();
  const psb_capabilities &caps = t.caps;
  std::vector<Refusal> found;
  auto add = [&](std::string setting, std::string message) {
    found.push_back({std::move(setting), std::move(message)});
  };
  // QoS, notify, transport and hosts outside the capabilities: the rule every C++ driver's
  // SDK applies in check() too, so that it is worded in one place (psbench/sdk_refusals.hpp).
  psb::sdk::Refusals outside;
  psb::sdk::refuse_outside_caps(caps, cfg, outside);
  for (const psb::sdk::Refusal &r : outside.all())
    add(r.setting, std::string(t.name) + ": " + r.reason);
  if (node.size > caps.max_payload)
    add("size", std::string(t.name) + ": size " + std::to_string(node.size) +
                    " bytes is over this driver's largest message of " +
                    std::to_string(caps.max_payload) + " bytes");
  const bool module = node.runs(Role::module);
  // More readers or writers on a topic than the driver has: what asked for them (a
  // module's --output or --input, else --subscribers or --publishers) and the limit.
  auto per_topic = [&](const char *setting, const std::string &asked, uint32_t most,
                       const char *endpoint) {
    add(setting, std::string(t.name) + ": " + asked +
                     " is not supported; this driver has at most " + std::to_string(most) + " " +
                     endpoint + "(s) per topic");
  };
  if (caps.readers_per_topic && node.topic_readers() > caps.readers_per_topic)
    per_topic("subscribers",
              module ? "an --output with " + std::to_string(node.topic_readers()) +
                           " readers (TOPIC:SIZE:READERS)"
                     : "--subscribers " + std::to_string(node.subscribers),
              caps.readers_per_topic, "reader");
  if (caps.writers_per_topic && node.topic_writers() > caps.writers_per_topic)
    per_topic("publishers",
              module ? "an --input with " + std::to_string(node.topic_writers()) +
                           " writers (TOPIC:WRITERS)"
                     : "--publishers " + std::to_string(node.publishers),
              caps.writers_per_topic, "writer");
  if (node.loan && !driver.loans())
    add("loan", std::string(t.name) + ": --loan is not supported (no zero-copy write)");
  auto keys = string_list(caps.option_keys);
  for (auto &[k, v] : node.options) {
    bool known = false;
    for (auto &key : keys) known |= (key == k);
    if (!known)
      add("option:" + k, std::string(t.name) + ": option '" + k +
                             "' is not known; this driver takes " + joined(keys));
  }
  return found;
}

}  // namespace

std::vector<Refusal> refusals(const LoadedDriver &driver, const NodeConfig &node,
                              const psb_config &cfg) {
  const char *name = driver.table().name;
  std::vector<Refusal> found = capability_refusals(driver, node, cfg);
  const size_t own = found.size();
  // The driver's refusal of a setting the node already refused explains it (e.g. what the
  // middleware would need instead): it follows the node's message, without the driver's
  // name. Every other one stands alone.
  for (Refusal &r : driver_refusals(driver.table(), cfg)) {
    Refusal *same = nullptr;
    for (size_t i = 0; i < own && !same; ++i)
      if (found[i].setting == r.setting) same = &found[i];
    std::string message = with_driver_name(name, r.message);
    if (same == nullptr) {
      found.push_back({r.setting, message});
      continue;
    }
    const std::string prefix = std::string(name) + ": ";
    same->message += " (" + message.substr(prefix.size()) + ")";
  }
  return found;
}

void refuse_unsupported(const LoadedDriver &driver, const NodeConfig &node, const psb_config &cfg) {
  std::string all;
  for (const Refusal &r : refusals(driver, node, cfg)) all += (all.empty() ? "" : "; ") + r.message;
  if (!all.empty()) throw RefusedError(all);
}

std::string refusals_json(const std::vector<Refusal> &found) {
  JsonWriter j;
  j.begin_object().field("accepted", found.empty()).key("refusals").begin_array();
  for (const Refusal &r : found)
    j.begin_object().field("setting", r.setting).field("message", r.message).end_object();
  j.end_array().end_object();
  return j.str();
}

}  // namespace psb
