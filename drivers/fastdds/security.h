// OMG DDS Security for a context: options security=MODE and security_dir=DIR (given
// together by psbench's orchestrator, docs/security.md) checked, and turned into the
// participant's dds.sec.* properties. The mode itself lives in the signed governance
// document of DIR (what is authenticated, checked, encrypted); the driver loads the three
// builtin plugins (PKI-DH, Access-Permissions, AES-GCM-GMAC) in every mode, so that one
// governance document means the same to every vendor.
#ifndef PSBENCH_FASTDDS_SECURITY_H
#define PSBENCH_FASTDDS_SECURITY_H

#include <fastdds/dds/domain/qos/DomainParticipantQos.hpp>
#include <string>

#include "psbench/sdk_dds.hpp"

namespace psbfastdds {

using SecuritySettings = psb::sdk::Security;

// Reads options security and security_dir, recording every refusal ("option:security",
// "option:security_dir"): an unknown mode, a folder without one of its five files.
SecuritySettings parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse);

// Adds the dds.sec.* properties of sec to qos (nothing with mode none).
void apply_security(const SecuritySettings &sec, eprosima::fastdds::dds::DomainParticipantQos &qos);

}  // namespace psbfastdds

#endif
