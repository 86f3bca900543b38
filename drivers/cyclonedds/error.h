// Error messages: formatted only when something has failed.
#pragma once

#include <dds/dds.h>

#include "psbench/sdk.hpp"

namespace psbcyc {

using psb::sdk::fail;

// Throws "<what>: <Cyclone's return code>" (the SDK puts "cyclonedds: " before it).
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_dds(const char *what, dds_return_t rc) {
  fail("%s: %s", what, dds_strretcode(rc));
}

// What a Cyclone call returned (an entity, or DDS_RETCODE_OK), or fail_dds(what) when it
// returned an error code.
inline dds_entity_t checked(dds_entity_t rc, const char *what) {
  if (rc < 0) fail_dds(what, rc);
  return rc;
}

}  // namespace psbcyc
