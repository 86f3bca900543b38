// The psbench driver table for ZeroMQ PUB/SUB (libzmq's C API): a writer is an XPUB
// socket that binds the topic's endpoint, a reader a SUB socket that connects to it.
// No broker. This file only adapts the C ABI to Context, Writer and Reader.
#include <zmq.h>

#include <cstdio>
#include <exception>
#include <new>

#include "psbench/driver.h"

#include "psbench/driver_support.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"
#include "zmq_context.h"

namespace psbzmq {
namespace {

const char *zeromq_version() {
  static const char *const text = [] {
    static char buf[32];
    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);  // the libzmq actually loaded
    std::snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
    return buf;
  }();
  return text;
}

int zeromq_check(const psb_config *cfg, psb_error *err) {
  return parse_settings(cfg, nullptr, err) ? 0 : -1;
}

void *zeromq_open(const psb_config *cfg, psb_error *err) {
  try {
    zeromq_version();  // computed here, never on the timed path
    return open_context(cfg, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "zeromq: open failed: %s", e.what());
    return nullptr;
  }
}

void zeromq_close(void *ctx) { close_context(static_cast<Context *>(ctx)); }

void *zeromq_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Context *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "zeromq: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void zeromq_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *zeromq_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user,
                           psb_error *err) {
  try {
    return Reader::create(static_cast<Context *>(ctx), topic, on_data, user, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "zeromq: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void zeromq_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

int zeromq_matched_readers(void *w) { return static_cast<Writer *>(w)->matched_readers(); }
int zeromq_matched_writers(void *r) { return static_cast<Reader *>(r)->matched_writers(); }

int zeromq_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

void *zeromq_loan(void *w, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->loan(len, err);
}

int zeromq_write_loan(void *w, void *sample, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write_loan(sample, len, err);
}

int zeromq_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

void zeromq_release(void *r) { static_cast<Reader *>(r)->release(); }

const char *const kTransports[] = {"tcp", "ipc", "inproc", nullptr};
const char *const kOptionKeys[] = {"sndhwm", "rcvhwm", "port_base", nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "zeromq",
    .description = "ZeroMQ PUB/SUB without a broker (libzmq C API): an XPUB binds per topic, SUBs "
                   "connect; best effort only, a PUB drops messages beyond the high-water mark",
    .version = zeromq_version,
    .caps = {.reliability = PSB_BEST_EFFORT,  // PUB drops at the high-water mark
             .durability = PSB_VOLATILE,      // nothing kept for late joiners
             .history = PSB_KEEP_LAST,        // keep_last:1 only (ZMQ_CONFLATE); check() says
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = nullptr,
             .cleanup_command = nullptr,
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 1,   // the node writes into the zmq_msg_t that is sent
             .readers_per_topic = 0,
             .writers_per_topic = 1},  // the writer binds the topic's endpoint; a SUB connects to one
    .check = zeromq_check,
    .open = zeromq_open,
    .close = zeromq_close,
    .create_writer = zeromq_create_writer,
    .destroy_writer = zeromq_destroy_writer,
    .create_reader = zeromq_create_reader,
    .destroy_reader = zeromq_destroy_reader,
    .matched_readers = zeromq_matched_readers,
    .matched_writers = zeromq_matched_writers,
    .write = zeromq_write,
    .loan = zeromq_loan,
    .write_loan = zeromq_write_loan,
    .take = zeromq_take,
    .release = zeromq_release,
    .flush = nullptr,  // every write goes out at once
    // ZeroMQ cannot tell when a PUB's queues are empty: no drain. Writers linger up to
    // 10 s at close instead, so queued messages still leave (README, "Closing").
    .drain = nullptr,
    .counters = nullptr,
};

}  // namespace
}  // namespace psbzmq

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { return &psbzmq::kDriver; }
