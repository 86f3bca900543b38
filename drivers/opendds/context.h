// A driver context: one DomainParticipant in the run's domain, with its own transport
// instance (rtps_udp or tcp) bound to it, one Publisher, one Subscriber and the run's
// type registered under idl/psbench.idl's name.
#pragma once

#include <dds/DCPS/transport/framework/TransportConfig_rch.h>
#include <dds/DCPS/transport/framework/TransportInst_rch.h>
#include <dds/DdsDcpsDomainC.h>
#include <dds/DdsDcpsPublicationC.h>
#include <dds/DdsDcpsSubscriptionC.h>

#include <map>
#include <string>

#include "settings.h"

namespace psbodds {

// The type name every DDS driver of psbench registers (interoperability: docs/dds.md).
inline const char *type_name(const Settings &s) {
  return s.complex ? "psbench::Complex" : "psbench::Bytes";
}

class Context {
 public:
  // Validates cfg and creates the participant; throws psb::sdk::Error if refused.
  explicit Context(const psb_config &cfg);
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  const Settings settings;
  DDS::Publisher_var publisher;
  DDS::Subscriber_var subscriber;

  // Topics are shared by the endpoints of one context and deleted with the last of them.
  DDS::Topic_ptr acquire_topic(const char *name);
  void release_topic(DDS::Topic_ptr topic);

 private:
  void tear_down() noexcept;

  DDS::DomainParticipant_var participant_;
  OpenDDS::DCPS::TransportConfig_rch transport_config_;
  OpenDDS::DCPS::TransportInst_rch transport_;
  bool domain_bound_ = false;
  std::map<std::string, std::pair<DDS::Topic_var, int>> topics_;
};

}  // namespace psbodds
