#include "context.h"

#include <dds/ddsc/dds_loan_api.h>

#include "error.h"

namespace psbcyc {

dds_entity_t create_topic(const Context &ctx, const char *name, psb_error *err) {
  const dds_entity_t topic = dds_create_topic(ctx.participant, ctx.descriptor, name, nullptr, nullptr);
  if (topic < 0) set_dds_error(err, "cannot create topic", topic);
  return topic;
}

bool endpoint_on_shm(const Context &ctx, dds_entity_t endpoint, const char *kind, psb_error *err) {
  if (ctx.settings.transport != Transport::shm || dds_is_shared_memory_available(endpoint)) return true;
  psb_set_error(err, "cyclonedds: transport shm: Cyclone did not put the %s on iceoryx shared memory "
                 "(is iox-roudi running, and reachable by this process?)", kind);
  return false;
}

}  // namespace psbcyc
