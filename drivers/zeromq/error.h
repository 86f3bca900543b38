// Error messages: formatted only when something has failed.
#pragma once
#include <cstdarg>
#include <cstdio>

#include "psbench/driver.h"

namespace psbzmq {

__attribute__((format(printf, 2, 3))) inline void set_error(psb_error *err, const char *fmt, ...) {
  if (err == nullptr) return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

}  // namespace psbzmq
