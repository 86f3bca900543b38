#include "refusals.hpp"

#include "json_writer.hpp"

namespace psb {
namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (auto &s : v) out += (out.empty() ? "" : "|") + s;
  return out.empty() ? "(none)" : out;
}

std::string unsupported(const char *driver, const std::string &setting, const std::string &wanted,
                        const std::vector<std::string> &supported) {
  return std::string(driver) + ": " + setting + " '" + wanted +
         "' is not supported; this driver supports " + joined(supported);
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
  auto in_set = [&](const char *setting, const char *wanted, uint32_t bit, uint32_t set,
                    const std::vector<std::string> &supported) {
    if (!(set & bit)) add(setting, unsupported(t.name, setting, wanted, supported));
  };
  in_set("reliability", reliability_name(node.reliability), node.reliability, caps.reliability,
         reliability_names(caps.reliability));
  in_set("durability", durability_name(node.durability), node.durability, caps.durability,
         durability_names(caps.durability));
  if (node.history)
    in_set("history", history_name(node.history), node.history, caps.history,
           history_names(caps.history));
  in_set("notify", notify_name(node.notify), node.notify, caps.notify, notify_names(caps.notify));
  auto transports = string_list(caps.transports);
  bool transport_ok = false;
  for (auto &tr : transports) transport_ok |= (tr == cfg.transport);
  if (!transport_ok) add("transport", unsupported(t.name, "transport", cfg.transport, transports));
  if (!node.address.empty() && !caps.crosses_hosts)
    add("hosts", std::string(t.name) +
                     ": a run across hosts is not supported; this driver runs on one host");
  if (node.size > caps.max_payload)
    add("size", std::string(t.name) + ": size " + std::to_string(node.size) +
                    " bytes is over this driver's largest message of " +
                    std::to_string(caps.max_payload) + " bytes");
  const bool module = node.runs(Role::module);
  if (caps.readers_per_topic && node.topic_readers() > caps.readers_per_topic)
    add("subscribers", std::string(t.name) + ": " +
                           (module ? "an --output with " + std::to_string(node.topic_readers()) +
                                         " readers (TOPIC:SIZE:READERS)"
                                   : "--subscribers " + std::to_string(node.subscribers)) +
                           " is not supported; this driver has at most " +
                           std::to_string(caps.readers_per_topic) + " reader(s) per topic");
  if (caps.writers_per_topic && node.topic_writers() > caps.writers_per_topic)
    add("publishers", std::string(t.name) + ": " +
                          (module ? "an --input with " + std::to_string(node.topic_writers()) +
                                        " writers (TOPIC:WRITERS)"
                                  : "--publishers " + std::to_string(node.publishers)) +
                          " is not supported; this driver has at most " +
                          std::to_string(caps.writers_per_topic) + " writer(s) per topic");
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
