// The one iceoryx runtime of a process, RouDi's presence, names and the version.
//
// iceoryx allows one runtime per process (PoshRuntime::initRuntime). The node may
// open several contexts in one process (intra-process placement: roles as threads),
// so the first open() registers the runtime with RouDi and every context shares it;
// it lives until the process exits, when iceoryx deregisters it.
#ifndef PSBENCH_ICEORYX_RUNTIME_H
#define PSBENCH_ICEORYX_RUNTIME_H

#include <string>

#include "iceoryx_posh/capro/service_description.hpp"

namespace psbiox {

// True when a RouDi accepts clients: its socket (/tmp/roudi) takes a connection.
bool roudi_running();

// Registers this process with RouDi once (name from the run id and the pid); later
// calls return at once. Throws psb::sdk::Error when RouDi is not running: iceoryx
// itself would wait 60 s for it and then abort the process.
void ensure_runtime(const std::string &run_id);

// ("psbench", run id, topic): the run id keeps concurrent runs apart. Names longer
// than iceoryx's 100-character IdString are shortened to a prefix and a hash.
iox::capro::ServiceDescription service_for(const std::string &run_id, const std::string &topic);

// 1 when at least one publisher offers the service, else 0, from RouDi's service
// registry (iox::runtime::ServiceDiscovery, one per process). iceoryx does not tell a
// subscriber how many publishers it is connected to, and its SubscribeState says
// SUBSCRIBED with no publisher at all (many-to-many build), so it cannot answer this.
int publishers_offering(const iox::capro::ServiceDescription &service);

// The version of the libiceoryx_posh loaded, asked at run time, e.g.
// "2.0.3 (libiceoryx_posh built 2023-02-06T15:53:11Z)".
const char *library_version();

}  // namespace psbiox

#endif
