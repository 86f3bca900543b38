// The psbench driver table for Eclipse Cyclone DDS (C API). This file only adapts the
// C ABI to Context, Writer and Reader.
#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "psbench/driver.h"

#include "context.h"
#include "domains.h"
#include "error.h"
#include "qos.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbcyc {
namespace {

// The version the headers were built against (from the CMake package), and the file
// name of the libddsc actually loaded, which carries the library's full version
// (Cyclone 0.10 has no call that reports its version).
const char *cyc_version() {
  static const char *const text = [] {
    static char buf[PATH_MAX + 64];
    char resolved[PATH_MAX] = "";
    Dl_info info{};
    const char *lib = "libddsc";
    if (dladdr(reinterpret_cast<void *>(&dds_write), &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, resolved) != nullptr) {
      const char *slash = std::strrchr(resolved, '/');
      lib = slash ? slash + 1 : resolved;
    }
    std::snprintf(buf, sizeof buf, "%s (%s)", PSBENCH_CYCLONEDDS_VERSION, lib);
    return buf;
  }();
  return text;
}

int cyc_check(const psb_config *cfg, psb_error *err) { return parse_settings(cfg, nullptr, err) ? 0 : -1; }

void cyc_close(void *p) {
  auto *ctx = static_cast<Context *>(p);
  if (ctx == nullptr) return;
  if (ctx->participant > 0) leave_domain(ctx->settings.domain_id, ctx->participant);
  if (ctx->qos != nullptr) dds_delete_qos(ctx->qos);
  delete ctx;
}

void *cyc_open(const psb_config *cfg, psb_error *err) {
  auto *ctx = new (std::nothrow) Context();
  if (ctx == nullptr) {
    psb_set_error(err, "cyclonedds: out of memory for a context");
    return nullptr;
  }
  if (!parse_settings(cfg, &ctx->settings, err)) {
    delete ctx;
    return nullptr;
  }
  cyc_version();  // worked out now, never on the timed path
  ctx->descriptor = ctx->settings.type == DataType::complex ? &psbench_Complex_desc : &psbench_Bytes_desc;
  ctx->qos = endpoint_qos(ctx->settings);
  ctx->participant = join_domain(ctx->settings.domain_id, domain_config(ctx->settings), err);
  if (ctx->participant == 0) {
    cyc_close(ctx);
    return nullptr;
  }
  return ctx;
}

template <typename F>
auto guarded(psb_error *err, const char *what, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception &e) {
    psb_set_error(err, "cyclonedds: %s failed: %s", what, e.what());
    return nullptr;
  }
}

void *cyc_create_writer(void *ctx, const char *topic, psb_error *err) {
  return guarded(err, "create_writer", [&]() -> void * { return Writer::create(static_cast<Context *>(ctx), topic, err); });
}

void cyc_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *cyc_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user, psb_error *err) {
  return guarded(err, "create_reader", [&]() -> void * {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user, err);
  });
}

void cyc_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int cyc_matched_readers(void *w) { return static_cast<Writer *>(w)->matched_readers(); }
int cyc_matched_writers(void *r) { return static_cast<Reader *>(r)->matched_writers(); }

int cyc_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

int cyc_flush(void *w, psb_error *err) { return static_cast<Writer *>(w)->flush(err); }
int cyc_drain(void *w, int64_t timeout_ns, psb_error *err) {
  return static_cast<Writer *>(w)->drain(timeout_ns, err);
}
void cyc_counters(void *endpoint, int is_reader, psb_put_counter put, void *user) {
  if (is_reader) static_cast<Reader *>(endpoint)->counters(put, user);
}

int cyc_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

const char *const kTransports[] = {"udp", "multicast", "shm", "config", nullptr};
const char *const kServices[] = {"shm:iox-roudi", nullptr};
const char *const kOptionKeys[] = {"type", "elements", "domain_id", "cyclonedds_uri", "write_batch", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "cyclonedds",
    .description = "Eclipse Cyclone DDS (C API): types from idl/psbench.idl by idlc; UDP on loopback "
                   "by default, multicast, iceoryx shared memory, or a vendor configuration",
    .version = cyc_version,
    .caps = {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
             .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
             .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr,  // iox-roudi reclaims what a killed process held
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 0,
             .readers_per_topic = 0,  // no limit
             .writers_per_topic = 0},  // no limit
    .check = cyc_check,
    .open = cyc_open,
    .close = cyc_close,
    .create_writer = cyc_create_writer,
    .destroy_writer = cyc_destroy_writer,
    .create_reader = cyc_create_reader,
    .destroy_reader = cyc_destroy_reader,
    .matched_readers = cyc_matched_readers,
    .matched_writers = cyc_matched_writers,
    .write = cyc_write,
    .loan = nullptr,
    .write_loan = nullptr,
    .take = cyc_take,
    .release = nullptr,
    .flush = cyc_flush,
    .drain = cyc_drain,
    .counters = cyc_counters,
};

}  // namespace
}  // namespace psbcyc

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { return &psbcyc::kDriver; }
