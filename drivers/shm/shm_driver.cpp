// The psbench driver table for the shm baseline: a POSIX shared-memory
// single-producer single-consumer ring per topic, with no middleware at all.
// This file only adapts the C ABI to Context, Writer and Reader.
#include <cstdio>
#include <exception>

#include <sys/utsname.h>

#include "psbench/driver.h"

#include "context.h"
#include "psbench/driver_support.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbshm {
namespace {

const char *shm_version() {
  static const char *const text = [] {
    static char buf[128];
    struct utsname u;
    if (uname(&u) == 0)
      std::snprintf(buf, sizeof buf, "posix-shm (linux %s)", u.release);
    else
      std::snprintf(buf, sizeof buf, "posix-shm (linux)");
    return buf;
  }();
  return text;
}

int shm_check(const psb_config *cfg, psb_error *err) {
  return parse_settings(cfg, nullptr, err) ? 0 : -1;
}

void *shm_open_ctx(const psb_config *cfg, psb_error *err) {
  try {
    shm_version(); // computed here, never on the timed path
    auto *ctx = new Context();
    if (!parse_settings(cfg, &ctx->settings, err)) {
      delete ctx;
      return nullptr;
    }
    return ctx;
  } catch (const std::exception &e) {
    psb_set_error(err, "shm: open failed: %s", e.what());
    return nullptr;
  }
}

void shm_close_ctx(void *p) {
  auto *ctx = static_cast<Context *>(p);
  if (ctx == nullptr)
    return;
  while (ctx->endpoints != nullptr) { // endpoints the caller left behind
    Endpoint *e = ctx->endpoints;
    if (e->is_reader)
      delete static_cast<Reader *>(e);
    else
      delete static_cast<Writer *>(e);
  }
  delete ctx;
}

void *shm_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Context *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "shm: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void shm_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *shm_create_reader(void *ctx, const char *topic, psb_on_data on_data,
                        void *user, psb_error *err) {
  try {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user,
                          err);
  } catch (const std::exception &e) {
    psb_set_error(err, "shm: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void shm_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int shm_matched_readers(void *w) {
  return static_cast<Writer *>(w)->matched_readers();
}

int shm_matched_writers(void *r) {
  return static_cast<Reader *>(r)->matched_writers();
}

int shm_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

void *shm_loan(void *w, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->loan(len, err);
}

int shm_write_loan(void *w, void *sample, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write_loan(sample, len, err);
}

int shm_take(void *r, int64_t timeout_ns, const void **data, size_t *len,
             psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

void shm_release(void *r) { static_cast<Reader *>(r)->release(); }

const char *const kTransports[] = {"shm", nullptr};
const char *const kServices[] = {nullptr};
const char *const kOptionKeys[] = {"wakeup", "slots", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "shm",
    .description = "POSIX shared-memory single-producer single-consumer ring per topic, no "
                   "middleware: the physical floor",
    .version = shm_version,
    .caps = {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
             .durability = PSB_VOLATILE,
             .history = 0,  // no history setting: the ring size is option slots (check() says why)
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr, // segments carry the run id; the launcher removes them
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 1, // write straight into the slot
             .readers_per_topic = 1,  // one ring, one reader
             .writers_per_topic = 1}, // and one writer
    .check = shm_check,
    .open = shm_open_ctx,
    .close = shm_close_ctx,
    .create_writer = shm_create_writer,
    .destroy_writer = shm_destroy_writer,
    .create_reader = shm_create_reader,
    .destroy_reader = shm_destroy_reader,
    .matched_readers = shm_matched_readers,
    .matched_writers = shm_matched_writers,
    .write = shm_write,
    .loan = shm_loan,
    .write_loan = shm_write_loan,
    .take = shm_take,
    .release = shm_release,
    .flush = nullptr,  // every write goes out at once
};

} // namespace
} // namespace psbshm

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) {
  return &psbshm::kDriver;
}
