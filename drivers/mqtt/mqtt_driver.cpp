// The psbench driver table for MQTT through a Mosquitto broker, with libmosquitto as
// the client. This file only adapts the C ABI to Connection, Writer and Reader.
#include <mosquitto.h>

#include <cstdio>
#include <exception>

#include "psbench/driver.h"

#include "connection.h"
#include "psbench/driver_support.h"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbmqtt {
namespace {

// Asked of the library that is loaded, not of the header it was built against.
const char *mqtt_version() {
  static const char *const text = [] {
    static char buf[64];
    int major = 0, minor = 0, revision = 0;
    mosquitto_lib_version(&major, &minor, &revision);
    std::snprintf(buf, sizeof buf, "libmosquitto %d.%d.%d", major, minor, revision);
    return buf;
  }();
  return text;
}

int mqtt_check(const psb_config *cfg, psb_error *err) {
  return parse_settings(cfg, nullptr, err) ? 0 : -1;
}

void *mqtt_open(const psb_config *cfg, psb_error *err) {
  try {
    mqtt_version();  // computed here, never on the timed path
    Settings s;
    if (!parse_settings(cfg, &s, err)) return nullptr;
    return Connection::open(s, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "mqtt: open failed: %s", e.what());
    return nullptr;
  }
}

void mqtt_close(void *ctx) { delete static_cast<Connection *>(ctx); }

void *mqtt_create_writer(void *ctx, const char *topic, psb_error *err) {
  try {
    return Writer::create(static_cast<Connection *>(ctx), topic, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "mqtt: create_writer failed: %s", e.what());
    return nullptr;
  }
}

void mqtt_destroy_writer(void *w) { delete static_cast<Writer *>(w); }

void *mqtt_create_reader(void *ctx, const char *topic, psb_on_data on_data, void *user,
                         psb_error *err) {
  try {
    return Reader::create(static_cast<Connection *>(ctx), topic, on_data, user, err);
  } catch (const std::exception &e) {
    psb_set_error(err, "mqtt: create_reader failed: %s", e.what());
    return nullptr;
  }
}

void mqtt_destroy_reader(void *r) { delete static_cast<Reader *>(r); }

// MQTT does not tell a client who else publishes or subscribes on a topic.
int mqtt_matched_readers(void *) { return -1; }
int mqtt_matched_writers(void *) { return -1; }

int mqtt_write(void *w, const void *data, size_t len, psb_error *err) {
  return static_cast<Writer *>(w)->write(data, len, err);
}

int mqtt_drain(void *w, int64_t timeout_ns, psb_error *err) {
  return static_cast<Writer *>(w)->drain(timeout_ns, err);
}

int mqtt_take(void *r, int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  return static_cast<Reader *>(r)->take(timeout_ns, data, len, err);
}

void mqtt_release(void *r) { static_cast<Reader *>(r)->release(); }

const char *const kTransports[] = {"tcp", nullptr};
const char *const kServices[] = {"mosquitto", nullptr};
const char *const kOptionKeys[] = {"broker", "keepalive", "tcp_nodelay", "max_inflight",
                                   nullptr};

const psb_driver kDriver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "mqtt",
    .description = "MQTT 3.1.1 through a Mosquitto broker (libmosquitto client): QoS 0/1, "
                   "retained messages as transient_local",
    .version = mqtt_version,
    .caps = {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,  // QoS 0, QoS 1
             .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL,  // retained = keep_last 1
             .history = 0,  // no reader history to set (check() says why)
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = kTransports,
             .services = kServices,
             .cleanup_command = nullptr,  // nothing outlives a killed client
             .option_keys = kOptionKeys,
             .max_payload = kMaxPayload,
             .loan = 0,
             .readers_per_topic = 0,  // no limit
             .writers_per_topic = 0},  // no limit
    .check = mqtt_check,
    .open = mqtt_open,
    .close = mqtt_close,
    .create_writer = mqtt_create_writer,
    .destroy_writer = mqtt_destroy_writer,
    .create_reader = mqtt_create_reader,
    .destroy_reader = mqtt_destroy_reader,
    .matched_readers = mqtt_matched_readers,
    .matched_writers = mqtt_matched_writers,
    .write = mqtt_write,
    .loan = nullptr,
    .write_loan = nullptr,
    .take = mqtt_take,
    .release = mqtt_release,
    .flush = nullptr,  // every write goes out at once
    // The client queues what the broker has not taken (or, at QoS 1, acknowledged) yet.
    .drain = mqtt_drain,
    .counters = nullptr,
};

}  // namespace
}  // namespace psbmqtt

extern "C" PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) {
  return &psbmqtt::kDriver;
}
