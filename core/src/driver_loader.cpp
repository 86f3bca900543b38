#include "driver_loader.hpp"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>

#include "json_writer.hpp"
#include "role.hpp"

namespace psb {
namespace {

template <typename NameOf>
std::vector<std::string> names_of(uint32_t set, NameOf name_of) {
  std::vector<std::string> out;
  for (uint32_t bit = 1; bit && bit <= set; bit <<= 1)
    if (set & bit) out.push_back(name_of(bit));
  return out;
}

}  // namespace

std::string with_driver_name(const char *name, const std::string &message) {
  std::string prefix = std::string(name) + ": ";
  return message.rfind(prefix, 0) == 0 ? message : prefix + message;
}

std::vector<std::string> reliability_names(uint32_t s) { return names_of(s, reliability_name); }
std::vector<std::string> durability_names(uint32_t s) { return names_of(s, durability_name); }
std::vector<std::string> history_names(uint32_t s) { return names_of(s, history_name); }
std::vector<std::string> notify_names(uint32_t s) { return names_of(s, notify_name); }

std::vector<std::string> string_list(const char *const *list) {
  std::vector<std::string> out;
  for (; list && *list; ++list) out.emplace_back(*list);
  return out;
}

LoadedDriver::LoadedDriver(const std::string &path)
    : path_(path.find('/') == std::string::npos ? path : std::filesystem::absolute(path).string()) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw RefusedError("cannot load driver " + path + ": " + dlerror());
  auto entry = reinterpret_cast<psb_driver_entry_fn>(dlsym(handle_, PSB_DRIVER_ENTRY_SYMBOL));
  if (!entry)
    throw RefusedError("driver " + path + " does not export " PSB_DRIVER_ENTRY_SYMBOL "()");
  table_ = entry();
  if (!table_)
    throw RefusedError("driver " + path + ": " PSB_DRIVER_ENTRY_SYMBOL "() returned NULL");
  // Checked before any other member is read: another version's table has another layout.
  if (table_->abi_version != PSB_ABI_VERSION)
    throw RefusedError("driver " + path + " was built for psbench driver ABI " +
                       std::to_string(table_->abi_version) + "; this psbench-node speaks ABI " +
                       std::to_string(PSB_ABI_VERSION) + ": rebuild the driver");
  const psb_driver &t = *table_;
  if (!t.name || !t.open || !t.close || !t.create_writer || !t.destroy_writer || !t.create_reader ||
      !t.destroy_reader || !t.write || !t.take)
    throw RefusedError("driver " + path + " leaves a required function of psb_driver NULL");
  if (!t.loan != !t.write_loan)
    throw RefusedError("driver " + path + " provides " +
                       (t.loan ? "loan() without write_loan()" : "write_loan() without loan()") +
                       ": a zero-copy write needs both (or neither)");
}

bool LoadedDriver::loans() const {
  return table_->loan != nullptr && table_->write_loan != nullptr;
}

LoadedDriver::~LoadedDriver() {
  // Not dlclose()d: middleware threads may outlive close() by a moment, and unloading
  // their code under them would crash at exit.
}

std::string LoadedDriver::version() const {
  return table_->version ? table_->version() : "unknown";
}

DriverConfig::DriverConfig(const NodeConfig &node, const psb_capabilities &caps)
    : run_id_(node.run_id), transport_(node.transport) {
  if (transport_ == "default" && caps.transports && caps.transports[0])
    transport_ = caps.transports[0];
  for (auto &[k, v] : node.options) options_.push_back(psb_option{k.c_str(), v.c_str()});
  cfg_.run_id = run_id_.c_str();
  cfg_.transport = transport_.c_str();
  cfg_.notify = node.notify;
  cfg_.qos = psb_qos{node.reliability, node.durability, node.history, node.history_depth};
  cfg_.max_payload = node.size;
  cfg_.options = options_.data();
  cfg_.option_count = options_.size();
  cfg_.use_loan = node.loan ? 1 : 0;
  cfg_.intra_process = node.intra_process() ? 1 : 0;
  cfg_.readers = node.topic_readers();
  cfg_.writers = node.topic_writers();
  for (const std::string &suffix : node.run_topics)
    run_topic_strings_.push_back(topic_name(node, suffix));
  for (const std::string &t : run_topic_strings_) run_topics_.push_back(t.c_str());
  if (!run_topics_.empty()) {
    cfg_.run_topics = run_topics_.data();
    cfg_.run_topic_count = uint32_t(run_topics_.size());
  }
  if (!node.address.empty()) {
    address_ = node.address;
    peer_strings_ = node.peers;
    for (const std::string &p : peer_strings_) peers_.push_back(p.c_str());
    peers_.push_back(nullptr);
    cfg_.local_address = address_.c_str();
    cfg_.peer_addresses = peers_.data();
  }
}

std::string describe_json(const LoadedDriver &driver) {
  const psb_driver &t = driver.table();
  JsonWriter j;
  auto list = [&](std::string_view k, const std::vector<std::string> &v) {
    j.key(k).begin_array();
    for (auto &s : v) j.value(s);
    j.end_array();
  };
  j.begin_object()
      .field("name", t.name)
      .field("description", t.description)
      .field("version", driver.version())
      .field("abi_version", t.abi_version)
      .field("path", driver.path());
  j.key("capabilities").begin_object();
  list("reliability", reliability_names(t.caps.reliability));
  list("durability", durability_names(t.caps.durability));
  list("history", history_names(t.caps.history));
  list("notify", notify_names(t.caps.notify));
  list("transports", string_list(t.caps.transports));
  list("option_keys", string_list(t.caps.option_keys));
  // Derived: loan() and write_loan() both present.
  j.field("max_payload", uint64_t(t.caps.max_payload)).field("loan", driver.loans());
  j.key("readers_per_topic");
  t.caps.readers_per_topic ? j.value(uint64_t(t.caps.readers_per_topic)) : j.null();
  j.key("writers_per_topic");
  t.caps.writers_per_topic ? j.value(uint64_t(t.caps.writers_per_topic)) : j.null();
  j.field("crosses_hosts", t.caps.crosses_hosts != 0);
  j.end_object().end_object();
  return j.str();
}

}  // namespace psb
