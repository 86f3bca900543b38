// Error messages: formatted only when something has failed.
#pragma once

#include <cstdarg>
#include <cstdio>

#include <dds/dds.h>

#include "psbench/driver.h"

namespace psbcyc {

__attribute__((format(printf, 2, 3))) inline void set_error(psb_error *err, const char *fmt, ...) {
  if (err == nullptr) return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

// "cyclonedds: <what>: <Cyclone's return code>"
inline void set_dds_error(psb_error *err, const char *what, dds_return_t rc) {
  set_error(err, "cyclonedds: %s: %s", what, dds_strretcode(rc));
}

}  // namespace psbcyc
