/* Test-only driver libraries the node must refuse at load (driver_loader_test.cpp): one
 * built for another ABI version (FAKE_ABI_VERSION), one with loan() but no write_loan()
 * (FAKE_HALF_LOAN). Only the table is ever read, never called. */
#include "psbench/driver.h"

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION PSB_ABI_VERSION
#endif

static const char *never(void) { return "fake"; }
static psb_context *open_nothing(const psb_config *cfg, psb_error *err) {
  (void)cfg;
  (void)err;
  return 0;
}
static void close_nothing(psb_context *ctx) { (void)ctx; }
static psb_writer *no_writer(psb_context *ctx, const char *topic, psb_error *err) {
  (void)ctx, (void)topic, (void)err;
  return 0;
}
static void no_destroy_writer(psb_writer *w) { (void)w; }
static psb_reader *no_reader(psb_context *ctx, const char *topic, psb_on_data cb, void *user,
                             psb_error *err) {
  (void)ctx, (void)topic, (void)cb, (void)user, (void)err;
  return 0;
}
static void no_destroy_reader(psb_reader *r) { (void)r; }
static int no_write(psb_writer *w, const void *data, size_t len, psb_error *err) {
  (void)w, (void)data, (void)len, (void)err;
  return -1;
}
static int no_take(psb_reader *r, int64_t timeout_ns, const void **data, size_t *len,
                   psb_error *err) {
  (void)r, (void)timeout_ns, (void)data, (void)len, (void)err;
  return -1;
}
#ifdef FAKE_HALF_LOAN
static void *no_loan(psb_writer *w, size_t len, psb_error *err) {
  (void)w, (void)len, (void)err;
  return 0;
}
#endif

static const char *const transports[] = {"fake", 0};

static const psb_driver table = {
    .abi_version = FAKE_ABI_VERSION,
    .name = "fake",
    .description = "a table the node must refuse",
    .version = never,
    .caps = {.reliability = PSB_BEST_EFFORT,
             .durability = PSB_VOLATILE,
             .notify = PSB_NOTIFY_WAIT,
             .transports = transports,
             .max_payload = 64},
    .open = open_nothing,
    .close = close_nothing,
    .create_writer = no_writer,
    .destroy_writer = no_destroy_writer,
    .create_reader = no_reader,
    .destroy_reader = no_destroy_reader,
    .write = no_write,
#ifdef FAKE_HALF_LOAN
    .loan = no_loan,
#endif
    .take = no_take,
};

PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { return &table; }
