// The psbench driver table for eProsima Fast DDS (C++ DDS API). This file only
// adapts the C ABI to Context, Writer and Reader.
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <exception>

#include <fastcdr/config.h>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastrtps/config.h>

#include "psbench/driver.h"

#include "context.h"
#include "psbench/driver_support.h"
#include "reader.h"
#include "settings.h"
#include "transports.h"
#include "writer.h"

namespace psbfastdds {
namespace {

// Fast DDS 2.9 has no run-time version call: report the version of the headers it
// was built against, and the file the dynamic linker actually loaded.
const char *fastdds_version() {
  static const char *const text = [] {
    static char buf[PATH_MAX + 128];
    char loaded[PATH_MAX] = "unknown";
    Dl_info info{};
    void *symbol = reinterpret_cast<void *>(
        &eprosima::fastdds::dds::DomainParticipantFactory::get_instance);
    char resolved[PATH_MAX];
    if (dladdr(symbol, &info) != 0 && info.dli_fname != nullptr &&
        realpath(info.dli_fname, resolved) != nullptr)
      std::snprintf(loaded, sizeof loaded, "%s", basename(resolved));
    std::snprintf(buf, sizeof buf, "%s (headers; loaded %s), Fast CDR %s",
                  FASTRTPS_VERSION_STR, loaded, FASTCDR_VERSION_STR);
    return buf;
  }();
  return text;
}

int fastdds_check(const psb_config *cfg, psb_error *err) {
  Settings s;
  if (!parse_settings(cfg, &s, err)) return -1;
  return check_transport_setup(s, err) ? 0 : -1;
}

void *fastdds_open(const psb_config *cfg, psb_error *err) {
  try {
    fastdds_version();  // computed here, never on the timed path
    Settings s;
    if (!parse_settings(cfg, &s, err)) return nullptr;
    return Context::open(s, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "fastdds: open failed: %s", e.what());
    return nullptr;
  }
}

void fastdds_close(void *ctx) { delete static_cast<Context *>(ctx); }

void *fastdds_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Context *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "fastdds: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void fastdds_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *fastdds_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user,
                            psb_error *err) {
  try {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "fastdds: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void fastdds_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int fastdds_matched_readers(void *w) { return static_cast<Writer *>(w)->matched_readers(); }

int fastdds_matched_writers(void *r) { return static_cast<Reader *>(r)->matched_writers(); }
int fastdds_drain(void *w, int64_t timeout_ns, psb_error *err) {
  return static_cast<Writer *>(w)->drain(timeout_ns, err);
}
void fastdds_counters(void *endpoint, int is_reader, psb_put_counter put, void *user) {
  if (is_reader) static_cast<Reader *>(endpoint)->counters(put, user);
}

int fastdds_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

int fastdds_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

const char *const kTransports[] = {"builtin", "udp", "multicast", "shm", "config", nullptr};
const char *const kCleanup[] = {"fastdds", "shm", "clean", nullptr};
const char *const kOptionKeys[] = {"type", "elements", "domain_id", "profiles_file",
                                   "participant_profile", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "fastdds",
    .description = "eProsima Fast DDS, DDS C++ API, types from idl/psbench.idl by fastddsgen; "
                   "builtin = shared memory + UDPv4 on 127.0.0.1 (Fast DDS's default on one "
                   "host, which sends each sample over both)",
    .version = fastdds_version,
    .caps = {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
             .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,
             .history = PSB_KEEP_LAST | PSB_KEEP_ALL,
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = nullptr,
             .cleanup_command = kCleanup,  // removes /dev/shm/fastrtps_* of dead processes
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 0,
             .readers_per_topic = 0,  // no limit
             .writers_per_topic = 0},  // no limit
    .check = fastdds_check,
    .open = fastdds_open,
    .close = fastdds_close,
    .create_writer = fastdds_create_writer,
    .destroy_writer = fastdds_destroy_writer,
    .create_reader = fastdds_create_reader,
    .destroy_reader = fastdds_destroy_reader,
    .matched_readers = fastdds_matched_readers,
    .matched_writers = fastdds_matched_writers,
    .write = fastdds_write,
    .loan = nullptr,
    .write_loan = nullptr,
    .take = fastdds_take,
    .release = nullptr,
    .flush = nullptr,  // every write goes out at once
    .drain = fastdds_drain,
    .counters = fastdds_counters,
};

}  // namespace
}  // namespace psbfastdds

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) {
  return &psbfastdds::kDriver;
}
