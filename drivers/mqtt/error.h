// Error message helper: called only when something has failed.
#ifndef PSBENCH_MQTT_ERROR_H
#define PSBENCH_MQTT_ERROR_H

#include <cstdarg>
#include <cstdio>

#include "psbench/driver.h"

namespace psbmqtt {

__attribute__((format(printf, 2, 3))) inline void set_error(psb_error *err, const char *fmt, ...) {
  if (err == nullptr) return;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

}  // namespace psbmqtt

#endif
