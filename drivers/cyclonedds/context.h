// A driver context: one Cyclone participant in the run's domain, and what its
// endpoints share.
#pragma once

#include <dds/dds.h>
#include <dds/ddsc/dds_loan_api.h>

#include "error.h"
#include "settings.h"

namespace psbcyc {

class Context {
 public:
  // Validates cfg and joins the run's domain; throws psb::sdk::Error if refused.
  explicit Context(const psb_config &cfg);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const Settings settings;
  dds_entity_t participant = 0;
  dds_qos_t *qos = nullptr;  // for every reader and writer of this context
  const dds_topic_descriptor_t *descriptor = nullptr;  // psbench_Bytes or psbench_Complex
};

// A topic of the run's type in the context's participant; throws on error.
inline dds_entity_t create_topic(const Context &ctx, const char *name) {
  return checked(dds_create_topic(ctx.participant, ctx.descriptor, name, nullptr, nullptr),
                 "cannot create topic");
}

// With transport shm, throws unless Cyclone really put the endpoint on iceoryx (it
// falls back to the network without saying so).
inline void require_shm(const Context &ctx, dds_entity_t endpoint, const char *kind) {
  if (ctx.settings.transport != Transport::shm || dds_is_shared_memory_available(endpoint)) return;
  fail("transport shm: Cyclone did not put the %s on iceoryx shared memory "
       "(is iox-roudi running, and reachable by this process?)", kind);
}

}  // namespace psbcyc
