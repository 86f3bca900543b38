// The psbench driver table for Eclipse iceoryx 2.0 ("classic"): zero-copy shared
// memory through the per-host daemon iox-roudi. This file only adapts the C ABI to
// Context, Writer and Reader.
#include <exception>

#include "psbench/driver.h"

#include "context.h"
#include "psbench/driver_support.h"
#include "reader.h"
#include "runtime.h"
#include "settings.h"
#include "writer.h"

namespace psbiox {
namespace {

// The configuration only: whether RouDi runs is the environment's, which open() finds
// out (psbench validates experiments before it starts RouDi).
int iox_check(const psb_config *cfg, psb_error *err) { return parse_settings(cfg, nullptr, err) ? 0 : -1; }

void *iox_open(const psb_config *cfg, psb_error *err) {
  try {
    library_version();  // computed here, never on the timed path
    auto *ctx = new Context();
    if (!parse_settings(cfg, &ctx->settings, err) || !ensure_runtime(ctx->settings.run_id, err)) {
      delete ctx;
      return nullptr;
    }
    return ctx;
  } catch (const std::exception &e) {
    psb_set_error(err, "iceoryx: open failed: %s", e.what());
    return nullptr;
  }
}

void iox_close(void *p) {
  auto *ctx = static_cast<Context *>(p);
  if (ctx == nullptr) return;
  while (ctx->endpoints != nullptr) delete ctx->endpoints;  // endpoints the caller left behind
  delete ctx;
}

void *iox_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Context *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "iceoryx: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void iox_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *iox_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user, psb_error *err) {
  try {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "iceoryx: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void iox_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int iox_matched_readers(void *w) { return static_cast<Writer *>(w)->matched_readers(); }

int iox_matched_writers(void *r) { return static_cast<Reader *>(r)->matched_writers(); }

int iox_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

void *iox_loan(void *w, size_t len, psb_error *err) { return static_cast<Writer *>(w)->loan(len, err); }

int iox_write_loan(void *w, void *sample, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write_loan(sample, len, err);
}

int iox_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

void iox_release(void *r) { static_cast<Reader *>(r)->release(); }

const char *const kTransports[] = {"shm", nullptr};
const char *const kServices[] = {"iox-roudi", nullptr};
const char *const kOptionKeys[] = {nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "iceoryx",
    .description = "Eclipse iceoryx 2.0 (classic): zero-copy shared memory through iox-roudi, "
                   "untyped publisher/subscriber",
    .version = library_version,
    .caps = {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
             .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
             .history = PSB_KEEP_LAST | PSB_KEEP_ALL,  // keep_all with reliable only (check)
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr,  // RouDi reclaims what a killed process held
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 1,  // loan()/write_loan() are the publisher's loan/publish
             .readers_per_topic = 0,  // no limit
             // iceoryx 2.0 lets several publishers offer one service, but its
             // service discovery lists the service once however many offer it, so a
             // subscriber cannot tell when all M are connected: one writer per topic.
             .writers_per_topic = 1},
    .check = iox_check,
    .open = iox_open,
    .close = iox_close,
    .create_writer = iox_create_writer,
    .destroy_writer = iox_destroy_writer,
    .create_reader = iox_create_reader,
    .destroy_reader = iox_destroy_reader,
    .matched_readers = iox_matched_readers,
    .matched_writers = iox_matched_writers,
    .write = iox_write,
    .loan = iox_loan,
    .write_loan = iox_write_loan,
    .take = iox_take,
    .release = iox_release,
    .flush = nullptr,  // every write goes out at once
};

}  // namespace
}  // namespace psbiox

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { return &psbiox::kDriver; }
