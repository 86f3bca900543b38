// Cyclone allows one domain per domain id in a process; the contexts (participants) of
// one process that use the same id share it, e.g. ping and pong as two threads.
#pragma once

#include <dds/dds.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "error.h"
#include "settings.h"
#include "transport_xml.h"

namespace psbcyc {

// The Cyclone configuration string (inline XML or file:// URIs, as CYCLONEDDS_URI
// would hold) for a context's domain. write_batch appends a fragment: Cyclone merges
// the fragments of a comma-separated configuration list.
inline std::string domain_config(const Settings &s) {
  std::string config;
  switch (s.transport) {
    case Transport::udp:
      config = kUdpXml;
      break;
    case Transport::multicast:
      config = kMulticastXml;
      break;
    case Transport::shm:
      config = kShmXml;
      break;
    case Transport::config:
      config = s.vendor_config;
      break;
  }
  if (s.write_batch)
    config +=
        ",<CycloneDDS><Domain id=\"any\"><Internal><WriteBatch>true</WriteBatch></Internal>"
        "</Domain></CycloneDDS>";
  return config;
}

struct Domain {
  dds_entity_t handle = 0;
  std::string config;
  int users = 0;
};
inline std::mutex domains_mutex;            // guards domains
inline std::map<uint32_t, Domain> domains;  // this process's, by id

// Creates a participant in domain `id`, creating the domain with `config` if this
// process has none yet. A second context asking for the same id with another
// configuration is refused. Returns the participant; throws psb::sdk::Error if refused.
inline dds_entity_t join_domain(uint32_t id, const std::string &config) {
  std::lock_guard lock(domains_mutex);
  Domain &d = domains[id];
  if (d.users == 0) {
    // The configuration is given explicitly, so CYCLONEDDS_URI in the environment
    // plays no part.
    d.handle = dds_create_domain(id, config.c_str());
    if (d.handle < 0) {
      const dds_return_t rc = d.handle;
      domains.erase(id);
      fail(
          "cannot create domain %u: %s (Cyclone printed the reason on stderr; "
          "check the configuration%s)",
          id, dds_strretcode(rc),
          rc == DDS_RETCODE_PRECONDITION_NOT_MET ? ": another library in this process already "
                                                   "created this domain"
                                                 : "");
    }
    d.config = config;
  } else if (d.config != config) {
    fail(
        "domain %u is already open in this process with another configuration; "
        "give each configuration its own domain_id=N",
        id);
  }
  dds_entity_t participant = dds_create_participant(id, nullptr, nullptr);
  if (participant < 0) {
    if (d.users == 0) {
      dds_delete(d.handle);
      domains.erase(id);
    }
    fail_dds("cannot create a participant", participant);
  }
  ++d.users;
  return participant;
}

// Deletes the participant; the last one out deletes the domain.
inline void leave_domain(uint32_t id, dds_entity_t participant) {
  std::lock_guard lock(domains_mutex);
  dds_delete(participant);
  auto it = domains.find(id);
  if (it != domains.end() && --it->second.users == 0) {
    dds_delete(it->second.handle);
    domains.erase(it);
  }
}

}  // namespace psbcyc
