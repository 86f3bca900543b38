// mqtt: MQTT 3.1.1 through a Mosquitto broker, with libmosquitto as the client. This
// file names the driver and its capabilities; Connection, Writer and Reader do the work.
// The C ABI table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <mosquitto.h>

#include "connection.h"
#include "psbench/sdk.hpp"
#include "reader.h"
#include "settings.h"
#include "writer.h"

namespace psbmqtt {
namespace {

struct Mqtt {
  static constexpr const char *name = "mqtt";
  static constexpr const char *description =
      "MQTT 3.1.1 through a Mosquitto broker (libmosquitto client): QoS 0/1, "
      "retained messages as transient_local, persistent sessions as persistent";
  // Asked of the library that is loaded, not of the header it was built against.
  static std::string version() {
    return "libmosquitto " + psb::sdk::dotted_version(&mosquitto_lib_version);
  }
  static psb::sdk::Capabilities capabilities();
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  // One client connection per context.
  struct Context : Connection {
    explicit Context(const psb_config &cfg)
        : Connection(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
  };
  // MQTT does not tell a client who else publishes or subscribes (matched: -1). The
  // client queues what the broker has not taken (or, at QoS 1, acknowledged) yet: drain.
  using Writer = psbmqtt::Writer;
  using Reader = psbmqtt::Reader;
};

psb::sdk::Capabilities Mqtt::capabilities() {
  static const char *const transports[] = {"tcp", nullptr};
  static const char *const option_keys[] = {
      "broker", "keepalive", "tcp_nodelay", "max_inflight", "security", "security_dir", nullptr};
  return {.reliability =
              PSB_BEST_EFFORT | PSB_RELIABLE,  // QoS 0, QoS 1
                                               // retained = keep_last 1; persistent = a session
                                               // that outlives the connection on a broker that
                                               // saves it (manifest durable_config), QoS 1 only
          .durability = PSB_VOLATILE | PSB_TRANSIENT_LOCAL | PSB_PERSISTENT,
          .history = 0,  // no reader history to set (check() says why)
          .transports = transports,
          .option_keys = option_keys,
          .max_payload = kMaxPayload,
          .crosses_hosts = 1};  // to option broker, wherever it is
}

}  // namespace
}  // namespace psbmqtt

PSB_SDK_DRIVER(psbmqtt::Mqtt)
