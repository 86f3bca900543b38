// psbench's QoS (psb_qos) mapped to Fast DDS DataWriterQos / DataReaderQos: what each
// psbench QoS setting becomes in Fast DDS. Anything not listed here keeps Fast DDS's
// default (or the XML's, with transport config).
#ifndef PSBENCH_FASTDDS_ENDPOINT_QOS_H
#define PSBENCH_FASTDDS_ENDPOINT_QOS_H

#include <algorithm>
#include <fastdds/dds/publisher/qos/DataWriterQos.hpp>
#include <fastdds/dds/subscriber/qos/DataReaderQos.hpp>

#include "settings.h"
#include "transports.h"

namespace psbfastdds {

// The QoS policies DataWriterQos and DataReaderQos share.
template <class Qos>
void apply_common(const Settings &s, Qos &qos) {
  using namespace eprosima::fastdds::dds;
  const psb_qos &q = s.qos;
  qos.reliability().kind =
      q.reliability == PSB_RELIABLE ? RELIABLE_RELIABILITY_QOS : BEST_EFFORT_RELIABILITY_QOS;
  qos.durability().kind = q.durability == PSB_TRANSIENT_LOCAL ? TRANSIENT_LOCAL_DURABILITY_QOS
                                                              : VOLATILE_DURABILITY_QOS;
  if (q.history == PSB_KEEP_LAST) {
    const int32_t depth = static_cast<int32_t>(q.history_depth);
    qos.history().kind = KEEP_LAST_HISTORY_QOS;
    qos.history().depth = depth;
    // psbench topics have no key: one instance. Raise the per-instance limit (400 by
    // default) only when the depth needs it; Fast DDS refuses a depth above it.
    auto &limits = qos.resource_limits();
    if (limits.max_samples_per_instance > 0 && depth > limits.max_samples_per_instance) {
      limits.max_instances = 1;
      limits.max_samples_per_instance = depth;
      limits.max_samples = std::max(limits.max_samples, depth);
    }
  } else if (q.history == PSB_KEEP_ALL) {
    qos.history().kind = KEEP_ALL_HISTORY_QOS;  // bounded by the resource limits
  }
  // history 0: Fast DDS's default, KEEP_LAST with depth 1.
}

// base: Fast DDS's defaults, or the vendor XML's default profile with transport config.
inline eprosima::fastdds::dds::DataWriterQos writer_qos(const Settings &s,
                                                        eprosima::fastdds::dds::DataWriterQos qos) {
  apply_common(s, qos);
  return qos;
}

inline eprosima::fastdds::dds::DataReaderQos reader_qos(const Settings &s,
                                                        eprosima::fastdds::dds::DataReaderQos qos) {
  apply_common(s, qos);
  if (s.transport == Transport::multicast) {
    // Listening only on the group makes writers send this reader's data there.
    qos.endpoint().multicast_locator_list.push_back(data_multicast_locator(s));
  }
  return qos;
}

}  // namespace psbfastdds

#endif
