// OMG DDS Security from psbench's credentials (docs/security.md), as the DDS drivers take
// it (fastdds, cyclonedds): options security=MODE and security_dir=DIR, read with
// security_options (sdk_security.hpp), and the five files of DIR, required when the
// participant is made. The mode itself lives in DIR's signed governance document (what is
// authenticated, checked, encrypted); a driver loads the three builtin plugins (PKI-DH,
// Access-Permissions, AES-GCM-GMAC) in every mode, so that one governance document means
// the same to every vendor.
#ifndef PSBENCH_SDK_DDS_SECURITY_HPP
#define PSBENCH_SDK_DDS_SECURITY_HPP

#include "psbench/sdk_security.hpp"

namespace psb::sdk {

// Reads options security and security_dir, refusing a mode other than the five psbench
// writes governance documents for ("option:security"), and a folder as security_options
// does. The files are not opened here: an experiment's check passes a folder psbench makes
// only for the run.
inline Security dds_security_options(const Options &options, Refusals &refuse) {
  return security_options(options, refuse,
                          {"auth", "access", "encrypt", "encrypt-payload", "encrypt-submessage"},
                          "the DDS Security modes are auth, access, encrypt, encrypt-payload and "
                          "encrypt-submessage");
}

// When making the participant: fails naming the first of DIR's files (ca.pem, cert.pem,
// key.pem, governance.p7s, permissions.p7s) that cannot be read.
inline void require_dds_security_files(const Security &sec) {
  require_files(sec, {"ca.pem", "cert.pem", "key.pem", "governance.p7s", "permissions.p7s"});
}

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_DDS_SECURITY_HPP
