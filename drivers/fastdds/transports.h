// The DomainParticipant of a context, set up for one of psbench's transport names,
// or from the user's Fast DDS XML (transport "config").
#ifndef PSBENCH_FASTDDS_TRANSPORTS_H
#define PSBENCH_FASTDDS_TRANSPORTS_H

#include <fastrtps/rtps/common/Locator.h>

#include <fastdds/dds/domain/DomainParticipant.hpp>

#include "settings.h"

namespace psbfastdds {

// What the transport needs from this machine. Transport "config": loads
// profiles_file and checks that participant_profile (if given) is in it. Best
// effort over udp or multicast: the kernel must allow a UDP receive buffer that
// holds two of the run's largest messages, or every large message would lose
// fragments. Throws psb::sdk::Error if refused.
void check_transport_setup(const Settings &s);

// A participant on s.domain_id. Without a vendor configuration every socket is
// bound to loopback, or across hosts (s.local_address) to the interface that has
// local_address; with one the XML decides. Throws psb::sdk::Error on failure.
eprosima::fastdds::dds::DomainParticipant *create_participant(const Settings &s);

// Transport "multicast": the group readers receive user data on.
eprosima::fastrtps::rtps::Locator_t data_multicast_locator(const Settings &s);

}  // namespace psbfastdds

#endif
