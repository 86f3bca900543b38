// psbench's transport names mapped to Fast DDS transport descriptors and locators.
#include "transports.h"

#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastdds/rtps/transport/shared_mem/SharedMemTransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

#include <algorithm>
#include <cstdio>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <memory>
#include <string>

#include "psbench/sdk.hpp"

namespace psbfastdds {
namespace {

using eprosima::fastdds::dds::DomainParticipant;
using eprosima::fastdds::dds::DomainParticipantFactory;
using eprosima::fastdds::dds::DomainParticipantQos;
using eprosima::fastdds::dds::PARTICIPANT_QOS_DEFAULT;
using eprosima::fastdds::rtps::SharedMemTransportDescriptor;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using psb::sdk::fail;
using ReturnCode = eprosima::fastrtps::types::ReturnCode_t;

constexpr const char *kDataGroup = "239.255.0.2";    // discovery uses 239.255.0.1
constexpr uint32_t kShmDefaultSegment = 512 * 1024;  // Fast DDS 2.9's default
constexpr uint32_t kUdpMinBuffer = 1024 * 1024;
constexpr uint32_t kInitialPeersRange = 32;

// A receive buffer that can hold a burst of fragments of the run's largest message (the
// kernel caps it at net.core.rmem_max).
uint64_t udp_buffer_size(const Settings &s) {
  return std::max<uint64_t>(kUdpMinBuffer, 2 * s.max_payload);
}

// The send buffer stays Fast DDS's default (0: the system's) unless two of the run's
// messages exceed 1 MiB. Fast DDS 2.9 sizes a reliable writer's piggybacked heartbeats
// by it (one per "minimum send buffer size" bytes written): with 1 MiB and 64-byte
// samples that is one per ~10,000 samples, more than the writer's 5000-sample keep_all
// history, which then fills unacknowledged and blocks write() until it times out
// (drivers/fastdds/README.md, "Reliable back to back").
uint32_t udp_send_buffer_size(const Settings &s) {
  return 2 * s.max_payload > kUdpMinBuffer ? static_cast<uint32_t>(2 * s.max_payload) : 0;
}

// A UDPv4 transport on one interface only: that of 127.0.0.1, or across hosts that of
// this host's address on the run's network (local_address), so that it carries the run.
std::shared_ptr<UDPv4TransportDescriptor> confined_udp(const Settings &s) {
  auto udp = std::make_shared<UDPv4TransportDescriptor>();
  udp->interfaceWhiteList.emplace_back(s.address());
  udp->sendBufferSize = udp_send_buffer_size(s);
  udp->receiveBufferSize = static_cast<uint32_t>(udp_buffer_size(s));
  return udp;
}

// Fast DDS's shared-memory transport with a segment that holds every fragment of two
// of the run's largest messages (the 512 KiB default drops fragments of larger ones).
std::shared_ptr<SharedMemTransportDescriptor> shared_memory(const Settings &s) {
  auto shm = std::make_shared<SharedMemTransportDescriptor>();
  const uint64_t want = std::max<uint64_t>(kShmDefaultSegment, 2 * s.max_payload + 256 * 1024);
  shm->segment_size(static_cast<uint32_t>(want));
  return shm;
}

Locator_t udp_locator(const std::string &address) {
  Locator_t loc;
  IPLocator::setIPv4(loc, address);
  loc.port = 0;  // Fast DDS fills in the well-known port of the domain
  return loc;
}

DomainParticipantQos psbench_participant_qos(const Settings &s) {
  DomainParticipantQos qos;  // Fast DDS's defaults, not the XML default profile
  qos.name(("psbench_" + s.run_id).c_str());
  auto &transport = qos.transport();
  transport.use_builtin_transports = false;
  auto &builtin = qos.wire_protocol().builtin;
  switch (s.transport) {
    case Transport::builtin:  // what use_builtin_transports gives, UDP confined to lo
      // (across hosts: to the interface of local_address; shared memory then carries only
      // what stays on this host: across emulated hosts neither node mapped the other's
      // segment, README "Across hosts")
      transport.user_transports.push_back(shared_memory(s));
      transport.user_transports.push_back(confined_udp(s));
      break;
    case Transport::udp: {  // unicast only, discovery too
      auto udp = confined_udp(s);
      // Unicast discovery reaches the ports of participant ids 0..range-1 on the
      // peer; ids count up per process, so leave room beyond Fast DDS's 4.
      udp->maxInitialPeersRange = kInitialPeersRange;
      transport.user_transports.push_back(udp);
      const Locator_t own = udp_locator(s.address());
      builtin.metatrafficUnicastLocatorList.push_back(own);
      // This host (other processes of the run here) and, across hosts, every other host.
      builtin.initialPeersList.push_back(own);
      for (const std::string &peer : s.peer_addresses)
        builtin.initialPeersList.push_back(udp_locator(peer));
      qos.wire_protocol().default_unicast_locator_list.push_back(own);
      break;
    }
    case Transport::multicast:  // multicast discovery (default) and data, on lo (across
                                // hosts: on the interface of local_address)
      transport.user_transports.push_back(confined_udp(s));
      break;
    case Transport::shm:
      transport.user_transports.push_back(shared_memory(s));
      break;
    case Transport::config:  // never here: the XML decides (create_participant)
      break;
  }
  return qos;
}

// OMG DDS Security onto Fast DDS's builtin plugins: the participant's dds.sec.* properties
// (nothing with mode none).
void apply_security(const psb::sdk::Security &sec, DomainParticipantQos &qos) {
  if (!sec.on) return;
  psb::sdk::dds::require_security_files(sec);
  const std::string file = "file://" + sec.dir + "/";  // file:///abs/path
  auto &p = qos.properties().properties();
  const std::string auth = "dds.sec.auth.builtin.PKI-DH.";
  const std::string access = "dds.sec.access.builtin.Access-Permissions.";
  p.emplace_back("dds.sec.auth.plugin", "builtin.PKI-DH");
  p.emplace_back(auth + "identity_ca", file + "ca.pem");
  p.emplace_back(auth + "identity_certificate", file + "cert.pem");
  p.emplace_back(auth + "private_key", file + "key.pem");
  p.emplace_back("dds.sec.access.plugin", "builtin.Access-Permissions");
  p.emplace_back(access + "permissions_ca", file + "ca.pem");
  p.emplace_back(access + "governance", file + "governance.p7s");
  p.emplace_back(access + "permissions", file + "permissions.p7s");
  p.emplace_back("dds.sec.crypto.plugin", "builtin.AES-GCM-GMAC");
}

// The kernel caps SO_RCVBUF at net.core.rmem_max and doubles what it grants.
void check_receive_buffer(const Settings &s) {
  const bool udp_only = s.transport == Transport::udp || s.transport == Transport::multicast;
  if (!udp_only || s.qos.reliability != PSB_BEST_EFFORT) return;
  uint64_t rmem_max = 0;
  if (FILE *f = std::fopen("/proc/sys/net/core/rmem_max", "r")) {
    unsigned long long v = 0;
    if (std::fscanf(f, "%llu", &v) == 1) rmem_max = v;
    std::fclose(f);
  }
  if (rmem_max == 0) return;  // cannot tell: let Fast DDS try
  const uint64_t granted = 2 * std::min<uint64_t>(udp_buffer_size(s), rmem_max);
  if (granted >= 2 * s.max_payload) return;
  fail(
      "best-effort messages of %llu bytes over UDP need a %llu-byte socket "
      "receive buffer, but net.core.rmem_max=%llu allows %llu; run `sysctl -w "
      "net.core.rmem_max=%llu` or use reliability reliable or transport shm",
      static_cast<unsigned long long>(s.max_payload),
      static_cast<unsigned long long>(2 * s.max_payload), static_cast<unsigned long long>(rmem_max),
      static_cast<unsigned long long>(granted), static_cast<unsigned long long>(s.max_payload));
}

void load_vendor_config(const Settings &s) {
  auto *factory = DomainParticipantFactory::get_instance();
  if (factory->load_XML_profiles_file(s.profiles_file) != ReturnCode::RETCODE_OK)
    fail(
        "cannot load profiles_file '%s' (Fast DDS's XML parser refused it; "
        "its message is above)",
        s.profiles_file.c_str());
  if (!s.participant_profile.empty()) {
    DomainParticipantQos qos;
    if (factory->get_participant_qos_from_profile(s.participant_profile, qos) !=
        ReturnCode::RETCODE_OK)
      fail("participant_profile '%s' is not in profiles_file '%s'", s.participant_profile.c_str(),
           s.profiles_file.c_str());
  }
}

}  // namespace

void check_transport_setup(const Settings &s) {
  if (s.transport == Transport::config)
    load_vendor_config(s);
  else
    check_receive_buffer(s);
}

DomainParticipant *create_participant(const Settings &s) {
  auto *factory = DomainParticipantFactory::get_instance();
  DomainParticipant *p = nullptr;
  check_transport_setup(s);
  if (s.transport == Transport::config && s.security.on) {
    // The XML's participant QoS, then the security properties added to it.
    DomainParticipantQos qos;
    if (!s.participant_profile.empty()) {
      factory->get_participant_qos_from_profile(s.participant_profile, qos);
    } else {
      factory->set_default_participant_qos(PARTICIPANT_QOS_DEFAULT);
      factory->get_default_participant_qos(qos);
    }
    apply_security(s.security, qos);
    p = factory->create_participant(s.domain_id, qos);
  } else if (s.transport == Transport::config) {
    if (!s.participant_profile.empty()) {
      p = factory->create_participant_with_profile(s.domain_id, s.participant_profile);
    } else {
      // The file's default profile applies only through the constant itself (a copy
      // of it is taken as explicit QoS). Re-read it in case this process created a
      // participant before the file was loaded.
      factory->set_default_participant_qos(PARTICIPANT_QOS_DEFAULT);
      p = factory->create_participant(s.domain_id, PARTICIPANT_QOS_DEFAULT);
    }
  } else {
    DomainParticipantQos qos = psbench_participant_qos(s);
    apply_security(s.security, qos);
    p = factory->create_participant(s.domain_id, qos);
  }
  if (p == nullptr)
    fail(
        "cannot create a DomainParticipant on domain %u with transport %s%s%s "
        "(Fast DDS's message is above; domain_id=N picks another domain)",
        s.domain_id, transport_name(s.transport), s.security.on ? " and security=" : "",
        s.security.on ? s.security.mode.c_str() : "");
  return p;
}

Locator_t data_multicast_locator(const Settings &s) {
  Locator_t loc;
  IPLocator::setIPv4(loc, kDataGroup);
  // The domain's user-multicast port (PB + DG * domain + d2 of the RTPS port formula).
  loc.port = 7400 + 250 * s.domain_id + 1;
  return loc;
}

}  // namespace psbfastdds
