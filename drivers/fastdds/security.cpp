// DDS Security options onto Fast DDS's builtin plugins (dds.sec.* participant properties).
#include "security.h"

#include <unistd.h>

namespace psbfastdds {
namespace {

// The modes psbench's security contract defines for DDS; "none" is no security.
constexpr const char *kModes[] = {
    "none", "auth", "access", "encrypt", "encrypt-payload", "encrypt-submessage", nullptr};
constexpr const char *kFiles[] = {"ca.pem",         "cert.pem",        "key.pem",
                                  "governance.p7s", "permissions.p7s", nullptr};

}  // namespace

SecuritySettings parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse) {
  SecuritySettings sec;
  const char *mode = options.find("security");
  const char *dir = options.find("security_dir");
  if (mode == nullptr && dir == nullptr) return sec;
  if (mode == nullptr || psb::sdk::index_in(mode, kModes) < 0) {
    refuse.add("option:security",
               "security=%s: not a DDS Security mode; use security=auth, access, encrypt, "
               "encrypt-payload or encrypt-submessage (with security_dir=DIR)",
               mode ? mode : "(missing)");
    return sec;
  }
  sec.mode = mode;
  if (!sec.on()) {
    if (dir != nullptr)
      refuse.add("option:security_dir", "security=none: option security_dir does not apply");
    return sec;
  }
  // The folder is judged here, its files when the participant is created
  // (apply_security): an experiment's check passes a folder psbench makes only for the run.
  if (dir == nullptr || *dir != '/') {
    refuse.add("option:security_dir",
               "security=%s: security_dir='%s' is not an absolute path; give the folder "
               "holding ca.pem, cert.pem, key.pem, governance.p7s and permissions.p7s",
               mode, dir ? dir : "(missing)");
    return sec;
  }
  sec.dir = dir;
  while (sec.dir.size() > 1 && sec.dir.back() == '/') sec.dir.pop_back();
  return sec;
}

void apply_security(const SecuritySettings &sec,
                    eprosima::fastdds::dds::DomainParticipantQos &qos) {
  if (!sec.on()) return;
  for (const char *const *f = kFiles; *f != nullptr; ++f)
    if (access((sec.dir + "/" + *f).c_str(), R_OK) != 0)
      throw psb::sdk::Error("security=" + sec.mode + ": " + sec.dir + "/" + *f +
                            " is missing or unreadable");
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
