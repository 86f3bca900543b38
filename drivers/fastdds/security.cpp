// DDS Security options onto Fast DDS's builtin plugins (dds.sec.* participant properties).
#include "security.h"

namespace psbfastdds {

SecuritySettings parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse) {
  // The folder is judged here, its files when the participant is created (apply_security):
  // an experiment's check passes a folder psbench makes only for the run.
  return psb::sdk::dds::security_options(options, refuse);
}

void apply_security(const SecuritySettings &sec,
                    eprosima::fastdds::dds::DomainParticipantQos &qos) {
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

}  // namespace psbfastdds
