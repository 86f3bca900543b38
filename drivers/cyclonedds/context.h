// A driver context: one Cyclone participant in the run's domain, and what its
// endpoints share.
#pragma once

#include <dds/dds.h>

#include "settings.h"

namespace psbcyc {

struct Context {
  Settings settings;
  dds_entity_t participant = 0;
  dds_qos_t *qos = nullptr;  // for every reader and writer of this context
  const dds_topic_descriptor_t *descriptor = nullptr;  // psbench_Bytes or psbench_Complex
};

// A topic of the run's type in the context's participant; <0 on error (err set).
dds_entity_t create_topic(const Context &ctx, const char *name, psb_error *err);

// With transport shm, whether Cyclone really put the endpoint on iceoryx (it falls
// back to the network without saying so); false with err set if not.
bool endpoint_on_shm(const Context &ctx, dds_entity_t endpoint, const char *kind, psb_error *err);

}  // namespace psbcyc
