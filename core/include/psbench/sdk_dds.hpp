// What the DDS drivers share beside their samples (psbench/sdk_c_samples.hpp): OMG DDS
// Security from psbench's credentials (cyclonedds, fastdds), option domain_id, the run's
// history in DDS terms, the refusal of a best-effort transient_local run and a vendor
// configuration for transport config (cyclonedds, opensplice), a domain that a process's
// contexts share, refused with another configuration (cyclonedds, opensplice), and the
// names of the standard's return codes (opendds, opensplice).
#ifndef PSBENCH_SDK_DDS_HPP
#define PSBENCH_SDK_DDS_HPP

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "psbench/sdk.hpp"
#include "psbench/sdk_security.hpp"

namespace psb::sdk::dds {

// Options security=MODE and security_dir=DIR (security_options), MODE one of the DDS
// Security modes of psbench's governance documents (docs/security.md). The folder is
// judged here, its files when the participant is created (require_security_files): an
// experiment's check passes a folder psbench makes only for the run.
inline Security security_options(const Options &options, Refusals &refuse) {
  return sdk::security_options(
      options, refuse, {"auth", "access", "encrypt", "encrypt-payload", "encrypt-submessage"},
      "the DDS Security modes are auth, access, encrypt, encrypt-payload and "
      "encrypt-submessage");
}

// Fails naming the first of the files the builtin plugins read that is missing from DIR:
// the CA, this node's certificate and key, the signed governance and permissions.
inline void require_security_files(const Security &sec) {
  require_files(sec, {"ca.pem", "cert.pem", "key.pem", "governance.p7s", "permissions.p7s"});
}

// Option domain_id, 0 to max; by default one of 1 to 200 from the run id (the same in
// every process of a run, most likely another for another run).
inline uint32_t domain_id(const Options &options, const std::string &run_id, uint32_t max) {
  return uint32_t(options.number("domain_id", id_in_range(run_id, 1, 200), 0, max));
}

// psbench's history as a DDS HistoryQosPolicy takes it, when the run sets one (history 0:
// none, the vendor's default, keep_last 1, stays): keep_all (depth 1, which DDS ignores
// then) or keep_last with depth N.
struct History {
  bool keep_all = false;
  int32_t depth = 1;
};
inline std::optional<History> history(const psb_qos &q) {
  if (q.history == 0) return std::nullopt;
  if (q.history == PSB_KEEP_ALL) return History{true, 1};
  return History{false, int32_t(q.history_depth)};
}

// Refuses durability transient_local without reliability reliable, `why` being the
// vendor's reason: "durability transient_local needs --reliability reliable: WHY".
inline void transient_local_needs_reliable(const psb_qos &q, Refusals &refuse, const char *why) {
  if (q.durability == PSB_TRANSIENT_LOCAL && q.reliability != PSB_RELIABLE)
    refuse.add("durability", "durability transient_local needs --reliability reliable: %s", why);
}

// Option key, the user's own vendor configuration: refused unless config (transport
// config: psbench then records transport 'config' instead of claiming one it did not
// choose). Its value with config, if given; nullptr otherwise.
inline const char *vendor_config(const Options &options, const char *key, bool config) {
  options.given_but(key, !config,
                    "is a vendor configuration; it needs --transport config (psbench then records "
                    "transport 'config' instead of claiming one it did not choose)");
  return config ? options.find(key) : nullptr;
}

// The name of a DDS ReturnCode_t in the standard's numbering (0 OK to 12
// ILLEGAL_OPERATION), for an error message; "unknown" for any other value.
inline const char *return_code_name(long rc) {
  static const char *const names[] = {"OK",
                                      "ERROR",
                                      "UNSUPPORTED",
                                      "BAD_PARAMETER",
                                      "PRECONDITION_NOT_MET",
                                      "OUT_OF_RESOURCES",
                                      "NOT_ENABLED",
                                      "IMMUTABLE_POLICY",
                                      "INCONSISTENT_POLICY",
                                      "ALREADY_DELETED",
                                      "TIMEOUT",
                                      "NO_DATA",
                                      "ILLEGAL_OPERATION"};
  return rc >= 0 && size_t(rc) < std::size(names) ? names[rc] : "unknown";
}

// This process's domain `id` in domains, made by make() when the process has none; a
// Domain keeps the configuration it was made with (its member `config`), and another one
// for the same id fails: a process has one domain per id.
template <class Domain, class Make>
typename PerProcess<uint32_t, Domain>::Lease join_domain(PerProcess<uint32_t, Domain> &domains,
                                                         uint32_t id, const std::string &config,
                                                         Make make) {
  auto domain = domains.acquire(id, make);
  if (domain->config != config)
    fail(
        "domain %u is already open in this process with another configuration; give each "
        "configuration its own domain_id=N",
        id);
  return domain;
}

// The same in the process's own registry of such domains, one per Domain type (kept past
// exit, for a Lease let go after static destruction), made by make(), or as Domain(id,
// config) without one. A Lease of the registry's: DomainLease<Domain>.
template <class Domain>
using DomainLease = typename PerProcess<uint32_t, Domain>::Lease;
template <class Domain, class Make>
DomainLease<Domain> join_domain(uint32_t id, const std::string &config, Make make) {
  static auto &domains = *new PerProcess<uint32_t, Domain>;
  return join_domain(domains, id, config, make);
}
template <class Domain>
DomainLease<Domain> join_domain(uint32_t id, const std::string &config) {
  return join_domain<Domain>(id, config, [&] { return std::make_unique<Domain>(id, config); });
}

}  // namespace psb::sdk::dds

#endif  // PSBENCH_SDK_DDS_HPP
