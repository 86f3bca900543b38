#include "domains.h"

#include <map>
#include <mutex>

#include "error.h"
#include "settings.h"
#include "transport_xml.h"

namespace psbcyc {
namespace {

struct Domain {
  dds_entity_t handle = 0;
  std::string config;
  int users = 0;
};

std::mutex mutex;
std::map<uint32_t, Domain> domains;

}  // namespace

namespace {

// Appended to psbench's own configurations: Cyclone merges the fragments of a
// comma-separated configuration list.
const char kWriteBatchXml[] =
    "<CycloneDDS><Domain id=\"any\"><Internal><WriteBatch>true</WriteBatch></Internal></Domain></CycloneDDS>";

std::string transport_config(const Settings &s) {
  switch (s.transport) {
    case Transport::udp: return kUdpXml;
    case Transport::multicast: return kMulticastXml;
    case Transport::shm: return kShmXml;
    case Transport::config: return s.vendor_config;
  }
  return {};
}

}  // namespace

std::string domain_config(const Settings &s) {
  std::string config = transport_config(s);
  if (s.write_batch) config += std::string(",") + kWriteBatchXml;
  return config;
}

dds_entity_t join_domain(uint32_t id, const std::string &config) {
  std::lock_guard lock(mutex);
  Domain &d = domains[id];
  if (d.users == 0) {
    // The configuration is given explicitly, so CYCLONEDDS_URI in the environment
    // plays no part.
    d.handle = dds_create_domain(id, config.c_str());
    if (d.handle < 0) {
      const dds_return_t rc = d.handle;
      domains.erase(id);
      fail("cannot create domain %u: %s (Cyclone printed the reason on stderr; "
           "check the configuration%s)",
           id, dds_strretcode(rc),
           rc == DDS_RETCODE_PRECONDITION_NOT_MET ? ": another library in this process already "
                                                    "created this domain" : "");
    }
    d.config = config;
  } else if (d.config != config) {
    fail("domain %u is already open in this process with another configuration; "
         "give each configuration its own domain_id=N", id);
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

void leave_domain(uint32_t id, dds_entity_t participant) {
  std::lock_guard lock(mutex);
  dds_delete(participant);
  auto it = domains.find(id);
  if (it != domains.end() && --it->second.users == 0) {
    dds_delete(it->second.handle);
    domains.erase(it);
  }
}

}  // namespace psbcyc
