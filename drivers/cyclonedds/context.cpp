#include "context.h"

#include <dds/ddsc/dds_loan_api.h>

#include "error.h"

namespace psbcyc {

dds_entity_t create_topic(const Context &ctx, const char *name) {
  const dds_entity_t topic = dds_create_topic(ctx.participant, ctx.descriptor, name, nullptr, nullptr);
  if (topic < 0) fail_dds("cannot create topic", topic);
  return topic;
}

void require_shm(const Context &ctx, dds_entity_t endpoint, const char *kind) {
  if (ctx.settings.transport != Transport::shm || dds_is_shared_memory_available(endpoint)) return;
  fail("transport shm: Cyclone did not put the %s on iceoryx shared memory "
       "(is iox-roudi running, and reachable by this process?)", kind);
}

}  // namespace psbcyc
