// Error messages: formatted only when something has failed.
#pragma once

#include <dds/dds.h>

#include "psbench/driver_support.h"

namespace psbcyc {

// "cyclonedds: <what>: <Cyclone's return code>"
inline void set_dds_error(psb_error *err, const char *what, dds_return_t rc) {
  psb_set_error(err, "cyclonedds: %s: %s", what, dds_strretcode(rc));
}

}  // namespace psbcyc
