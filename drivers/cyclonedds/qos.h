// psbench QoS onto Cyclone's QoS, one dds_qos_t shared by a context's readers and writers.
#pragma once

#include <dds/dds.h>

#include "settings.h"

namespace psbcyc {

// How long a reliable write may block for room in the writer's history (Cyclone's
// default is 100 ms, too short for a 4 MiB sample on a busy machine).
constexpr dds_duration_t kMaxBlockingTime = DDS_SECS(1);

// A new dds_qos_t (free with dds_delete_qos) for the run's endpoints.
dds_qos_t *endpoint_qos(const Settings &s);

}  // namespace psbcyc
