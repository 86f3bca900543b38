// A broker client's option broker=HOST:PORT, which psbench gives when it starts the broker
// itself (a manifest service with broker = true) and a user gives for a broker of their
// own: required, and read with broker_address (sdk_refusals.hpp). rabbitmq and mqtt read it
// so.
#ifndef PSBENCH_SDK_BROKER_HPP
#define PSBENCH_SDK_BROKER_HPP

#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psb::sdk {

// Reads option broker into out. Missing: refused as "option broker=HOST:PORT is missing;
// psbench sets it when it starts SERVER, or give the address of your own OWN" (server e.g.
// "mosquitto", own e.g. "broker"); malformed: broker_address's refusal, with an example on
// example_port. false when refused (out untouched).
inline bool broker_option(const Options &options, Refusals &refuse, int example_port,
                          const char *server, const char *own, BrokerAddress &out) {
  const std::string advice = std::string("psbench sets it when it starts ") + server +
                             ", or give the address of your own " + own;
  const char *text = options.required("broker", "HOST:PORT", advice);
  return text != nullptr && broker_address(text, example_port, refuse, out);
}

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_BROKER_HPP
