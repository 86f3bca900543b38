// psbench QoS onto Cyclone's QoS, one dds_qos_t shared by a context's readers and writers.
#pragma once

#include <dds/dds.h>

#include "settings.h"

namespace psbcyc {

// How long a reliable write may block for room in the writer's history (Cyclone's
// default is 100 ms, too short for a 4 MiB sample on a busy machine).
constexpr dds_duration_t kMaxBlockingTime = DDS_SECS(1);

// A new dds_qos_t (free with dds_delete_qos) for the run's endpoints.
inline dds_qos_t *endpoint_qos(const Settings &s) {
  dds_qos_t *q = dds_create_qos();
  if (s.qos.reliability == PSB_RELIABLE)
    dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, kMaxBlockingTime);
  else
    dds_qset_reliability(q, DDS_RELIABILITY_BEST_EFFORT, 0);
  const bool transient_local = s.qos.durability == PSB_TRANSIENT_LOCAL;
  dds_qset_durability(q,
                      transient_local ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  // history 0: not set, Cyclone's default (keep_last 1) stays.
  if (s.qos.history != 0) {
    const bool keep_all = s.qos.history == PSB_KEEP_ALL;
    const dds_history_kind_t kind = keep_all ? DDS_HISTORY_KEEP_ALL : DDS_HISTORY_KEEP_LAST;
    const int32_t depth = keep_all ? 1 : static_cast<int32_t>(s.qos.history_depth);
    dds_qset_history(q, kind, depth);
    // Cyclone keeps durability_service.history (default keep_last 1) for late
    // joiners, not history: make them the same so keep_last:N gives a late joiner N.
    if (transient_local)
      dds_qset_durability_service(q, 0, kind, depth, DDS_LENGTH_UNLIMITED, DDS_LENGTH_UNLIMITED,
                                  DDS_LENGTH_UNLIMITED);
  }
  return q;
}

}  // namespace psbcyc
