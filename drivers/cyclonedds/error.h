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

}  // namespace psbcyc
