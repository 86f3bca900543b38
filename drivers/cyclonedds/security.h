// OMG DDS Security for a context: options security=MODE and security_dir=DIR (given
// together by psbench's orchestrator, docs/security.md) checked, and turned into the
// <Security> section of the domain's Cyclone configuration. The mode itself lives in
// the signed governance document of DIR (what is authenticated, checked, encrypted);
// the driver loads the three builtin plugins (PKI-DH, permissions, AES-GCM-GMAC) in
// every mode, so that one governance document means the same to every vendor.
#pragma once

#include <dds/dds.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "psbench/sdk_dds.hpp"

namespace psbcyc {

// Cyclone's builtin plugins, by the names its configuration loads them (lib<name>.so).
inline constexpr const char *kSecurityPlugins[] = {"dds_security_auth", "dds_security_ac",
                                                   "dds_security_crypto", nullptr};

namespace detail {

// The folder the plugins are in, or an empty string when they are not all there. Cyclone
// looks for lib<name>.so in the folder Debian's build compiled in (<libdir>/libddsc0debian,
// a string in libddsc.so.0.10.2), else on the dynamic linker's path (upstream installs
// them beside libddsc).
inline std::string security_plugin_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void *>(&dds_write), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::string lib = info.dli_fname;
  const std::string libdir = lib.substr(0, lib.rfind('/'));
  for (const std::string &folder : {libdir + "/libddsc0debian", libdir}) {
    bool all = true;
    for (const char *const *p = kSecurityPlugins; *p != nullptr && all; ++p)
      all = access((folder + "/lib" + *p + ".so").c_str(), R_OK) == 0;
    if (all) return folder;
  }
  return {};
}

}  // namespace detail

// Reads options security and security_dir, recording every refusal ("option:security").
// The folder is judged here, its files when the participant is created (security_config):
// an experiment's check passes a folder psbench makes only for the run.
inline psb::sdk::Security parse_security(const psb::sdk::Options &options,
                                         psb::sdk::Refusals &refuse, bool shm) {
  psb::sdk::Security sec = psb::sdk::dds::security_options(options, refuse);
  if (!sec.on) return sec;
  const char *mode = sec.mode.c_str();
  // The folder goes into XML attributes and a comma-separated configuration list.
  if (sec.dir.find_first_of("<>&\"',") != std::string::npos)
    refuse.add("option:security_dir",
               "security=%s: security_dir='%s' holds one of < > & \" ' , which Cyclone's "
               "configuration cannot carry; use another folder",
               mode, sec.dir.c_str());
  if (detail::security_plugin_folder().empty())
    refuse.add("option:security",
               "security=%s: Cyclone's builtin security plugins (libdds_security_auth.so, "
               "_ac.so, _crypto.so) are not beside libddsc nor in its libddsc0debian folder",
               mode);
  if (shm)
    refuse.add("option:security",
               "security=%s: transport shm hands samples over iceoryx, outside DDS Security's "
               "protection (Cyclone 0.10.2 keeps secured endpoints on it); use transport udp "
               "or multicast",
               mode);
  return sec;
}

// The configuration fragment that turns on DDS Security with sec's files (Cyclone merges
// it into the domain's configuration, a comma-separated list); empty with mode none.
inline std::string security_config(const psb::sdk::Security &sec) {
  if (!sec.on) return {};
  psb::sdk::dds::require_security_files(sec);
  const std::string lib = detail::security_plugin_folder() + "/lib";
  const std::string file = "file:" + sec.dir + "/";
  auto library = [&](const char *name, const char *init, const char *fini) {
    return "<Library path=\"" + lib + name + ".so\" initFunction=\"" + init +
           "\" finalizeFunction=\"" + fini + "\"/>";
  };
  return "<CycloneDDS><Domain id=\"any\"><Security><Authentication>" +
         library("dds_security_auth", "init_authentication", "finalize_authentication") +
         "<IdentityCA>" + file + "ca.pem</IdentityCA><IdentityCertificate>" + file +
         "cert.pem</IdentityCertificate><PrivateKey>" + file +
         "key.pem</PrivateKey></Authentication><AccessControl>" +
         library("dds_security_ac", "init_access_control", "finalize_access_control") +
         "<PermissionsCA>" + file + "ca.pem</PermissionsCA><Governance>" + file +
         "governance.p7s</Governance><Permissions>" + file +
         "permissions.p7s</Permissions></AccessControl><Cryptographic>" +
         library("dds_security_crypto", "init_crypto", "finalize_crypto") +
         "</Cryptographic></Security></Domain></CycloneDDS>";
}

}  // namespace psbcyc
