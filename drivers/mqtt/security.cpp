#include "security.h"

#include <unistd.h>

#include <cstring>

#include "psbench/sdk.hpp"

namespace psbmqtt {

Tls parse_security(const psb::sdk::Options &options, psb::sdk::Refusals &refuse) {
  Tls tls;
  const char *mode = options.find("security");
  const char *dir = options.find("security_dir");
  if (mode == nullptr || std::strcmp(mode, "none") == 0) {
    if (dir != nullptr)
      refuse.add("option:security_dir", "option security_dir is given without security=tls");
    return tls;
  }
  if (std::strcmp(mode, "tls") != 0) {
    refuse.add("option:security",
               "security=%s: not offered; the only mode is tls (mutual TLS to the broker)", mode);
    return tls;
  }
  if (dir == nullptr || *dir == '\0') {
    refuse.add("option:security_dir",
               "security=tls: option security_dir=DIR is missing (DIR holds ca.pem, cert.pem, "
               "key.pem; psbench sets it)");
    return tls;
  }
  tls.ca = std::string(dir) + "/ca.pem";
  tls.cert = std::string(dir) + "/cert.pem";
  tls.key = std::string(dir) + "/key.pem";
  tls.on = true;
  return tls;
}

void require_files(const Tls &tls) {
  for (const std::string *file : {&tls.ca, &tls.cert, &tls.key})
    if (access(file->c_str(), R_OK) != 0)
      psb::sdk::fail(
          "security=tls: %s is missing or unreadable (security_dir must hold ca.pem, "
          "cert.pem and key.pem)",
          file->c_str());
}

}  // namespace psbmqtt
