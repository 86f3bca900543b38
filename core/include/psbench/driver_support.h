/*
 * Helpers for driver authors (optional; only driver.h is the contract).
 */
#ifndef PSBENCH_DRIVER_SUPPORT_H
#define PSBENCH_DRIVER_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>

#include "psbench/driver.h"

/* Writes a printf-style message into err (ignored when err is NULL). Call it only
 * when something has failed: formatting has no place on the timed path. */
__attribute__((format(printf, 2, 3))) static inline void psb_set_error(psb_error *err,
                                                                       const char *fmt, ...) {
  if (err == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
}

#endif
