// Cyclone allows one domain per domain id in a process; the contexts (participants) of
// one process that use the same id share it, e.g. ping and pong as two threads.
#pragma once

#include <cstdint>
#include <string>

#include <dds/dds.h>

namespace psbcyc {

// The Cyclone configuration string (inline XML or file:// URIs, as CYCLONEDDS_URI
// would hold) for a context's domain.
std::string domain_config(const struct Settings &s);

// Creates a participant in domain `id`, creating the domain with `config` if this
// process has none yet. A second context asking for the same id with another
// configuration is refused. Returns the participant; throws psb::sdk::Error if refused.
dds_entity_t join_domain(uint32_t id, const std::string &config);

// Deletes the participant; the last one out deletes the domain.
void leave_domain(uint32_t id, dds_entity_t participant);

}  // namespace psbcyc
