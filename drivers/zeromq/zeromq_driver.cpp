// zeromq: ZeroMQ PUB/SUB through libzmq's C API. A writer is an XPUB socket that binds
// the topic's endpoint, a reader a SUB socket that connects to it; no broker.
#include "psbench/sdk.hpp"
#include "reader.h"
#include "settings.h"
#include "writer.h"
#include "zmq_context.h"

namespace psbzmq {
namespace {

struct Zeromq {
  static constexpr const char *name = "zeromq";
  static constexpr const char *description =
      "ZeroMQ PUB/SUB without a broker (libzmq C API): an XPUB binds per topic, SUBs "
      "connect; best effort only, a PUB drops messages beyond the high-water mark";
  // The version of the libzmq actually loaded, e.g. "4.3.4".
  static std::string version() { return psb::sdk::dotted_version(&zmq_version); }
  static constexpr const char *option_keys[] = {"sndhwm", "rcvhwm", "port_base", nullptr};
  static constexpr psb::sdk::Capabilities capabilities = {
      .reliability = PSB_BEST_EFFORT,  // PUB drops at the high-water mark
      .durability = PSB_VOLATILE,      // nothing kept for late joiners
      .history = PSB_KEEP_LAST,        // keep_last:1 only (ZMQ_CONFLATE); check() says
      .transports = kTransportNames,
      .option_keys = option_keys,
      .max_payload = kMaxPayload,
      .writers_per_topic = 1,  // the writer binds the topic's endpoint; a SUB connects to one
      .crosses_hosts = 1};     // on host_transports
  // Binds --address, connects to every --peer.
  static constexpr const char *host_transports[] = {"tcp", nullptr};
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  // No flush(): every write goes out at once. No drain(): ZeroMQ cannot tell when a
  // PUB's queues are empty; writers linger up to 10 s at close instead, so queued
  // messages still leave (README, "Closing"). No counters().
  using Context = psbzmq::Context;
  using Writer = psbzmq::Writer;  // loan(): the node writes into the zmq_msg_t that is sent
  using Reader = psbzmq::Reader;
};

}  // namespace
}  // namespace psbzmq

PSB_SDK_DRIVER(psbzmq::Zeromq)
