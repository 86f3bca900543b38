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
  return std::string(driver) + ": " + setting + " '" + wanted + "' is not supported; this driver supports " +
         joined(supported);
}

// The driver's own reason, without its name (it follows the node's message).
std::string driver_reason(const psb_driver &t, const psb_config &cfg, bool *refused) {
  psb_error err{};
  *refused = t.check && t.check(&cfg, &err) != 0;
  if (!*refused) return "";
  std::string reason = err.message[0] ? err.message : "setting refused (driver gave no reason)";
  std::string prefix = std::string(t.name) + ": ";
  if (reason.rfind(prefix, 0) == 0) reason.erase(0, prefix.size());
  return reason;
}

}  // namespace

std::vector<Refusal> refusals(const LoadedDriver &driver, const NodeConfig &node,
                              const psb_config &cfg) {
  const psb_driver &t = driver.table();
  const psb_capabilities &caps = t.caps;
  std::vector<Refusal> found;
  auto add = [&](std::string setting, std::string message) {
    found.push_back({std::move(setting), std::move(message)});
  };
  bool check_refused = false;
  const std::string reason = driver_reason(t, cfg, &check_refused);
  // A QoS outside the capability sets, followed by the driver's reason when its check()
  // gives one (e.g. what the middleware would need instead).
  size_t qos_refusals = 0;
  auto qos = [&](const char *setting, const char *wanted, uint32_t bit, uint32_t set,
                 const std::vector<std::string> &supported) {
    if (set & bit) return;
    ++qos_refusals;
    add(setting, unsupported(t.name, setting, wanted, supported) +
                     (check_refused ? " (" + reason + ")" : ""));
  };
  qos("reliability", reliability_name(node.reliability), node.reliability, caps.reliability,
      reliability_names(caps.reliability));
  qos("durability", durability_name(node.durability), node.durability, caps.durability,
      durability_names(caps.durability));
  if (node.history)
    qos("history", history_name(node.history), node.history, caps.history, history_names(caps.history));
  if (!(caps.notify & node.notify))
    add("notify", unsupported(t.name, "notify", notify_name(node.notify), notify_names(caps.notify)));
  auto transports = string_list(caps.transports);
  bool transport_ok = false;
  for (auto &tr : transports) transport_ok |= (tr == cfg.transport);
  if (!transport_ok) add("transport", unsupported(t.name, "transport", cfg.transport, transports));
  if (node.size > caps.max_payload)
    add("size", std::string(t.name) + ": size " + std::to_string(node.size) +
                    " bytes is over this driver's largest message of " +
                    std::to_string(caps.max_payload) + " bytes");
  if (caps.readers_per_topic && node.subscribers > caps.readers_per_topic)
    add("subscribers", std::string(t.name) + ": --subscribers " + std::to_string(node.subscribers) +
                           " is not supported; this driver has at most " +
                           std::to_string(caps.readers_per_topic) + " reader(s) per topic");
  if (caps.writers_per_topic && node.publishers > caps.writers_per_topic)
    add("publishers", std::string(t.name) + ": --publishers " + std::to_string(node.publishers) +
                          " is not supported; this driver has at most " +
                          std::to_string(caps.writers_per_topic) + " writer(s) per topic");
  if (node.loan && !caps.loan)
    add("loan", std::string(t.name) + ": --loan is not supported (no zero-copy write)");
  auto keys = string_list(caps.option_keys);
  for (auto &[k, v] : node.options) {
    bool known = false;
    for (auto &key : keys) known |= (key == k);
    if (!known)
      add("option:" + k, std::string(t.name) + ": option '" + k + "' is not known; this driver takes " +
                             joined(keys));
  }
  // The driver's reason stands alone when no QoS refusal carries it.
  if (check_refused && qos_refusals == 0) add("driver", with_driver_name(t.name, reason));
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
