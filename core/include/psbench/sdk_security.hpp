// Options security=MODE and security_dir=DIR, as psbench's orchestrator gives them
// (docs/security.md): judged without opening a file, since an experiment's check passes a
// folder made only for the run; the files are read when connecting (require_files).
#ifndef PSBENCH_SDK_SECURITY_HPP
#define PSBENCH_SDK_SECURITY_HPP

#include <unistd.h>

#include <cstring>
#include <initializer_list>
#include <string>

#include "psbench/sdk_refusals.hpp"

namespace psb::sdk {

struct Security {
  bool on = false;
  std::string mode = "none";
  std::string dir;            // absolute, without a trailing slash; empty with mode none
  std::string ca, cert, key;  // DIR/ca.pem, DIR/cert.pem, DIR/key.pem
  std::string file(const char *name) const { return dir + "/" + name; }
};

// Reads both options, refusing a mode outside `modes` (besides none; `offered` says what
// the driver takes instead), security_dir without a mode, and a mode without an absolute
// security_dir.
inline Security security_options(const Options &options, Refusals &refuse,
                                 std::initializer_list<const char *> modes, const char *offered) {
  Security sec;
  const char *mode = options.find("security");
  const char *dir = options.find("security_dir");
  if (mode == nullptr || std::strcmp(mode, "none") == 0) {
    if (dir != nullptr)
      refuse.add("option:security_dir", "option security_dir is given without security=MODE (%s)",
                 offered);
    return sec;
  }
  bool known = false;
  for (const char *m : modes) known = known || std::strcmp(m, mode) == 0;
  if (!known) {
    refuse.add("option:security", "security=%s: not offered; %s", mode, offered);
    return sec;
  }
  if (dir == nullptr || *dir != '/') {
    refuse.add("option:security_dir",
               "security=%s: security_dir='%s' is not an absolute path; give the folder of "
               "ca.pem, cert.pem and key.pem (psbench's --security sets it)",
               mode, dir ? dir : "(missing)");
    return sec;
  }
  sec.on = true;
  sec.mode = mode;
  sec.dir = dir;
  while (sec.dir.size() > 1 && sec.dir.back() == '/') sec.dir.pop_back();
  sec.ca = sec.file("ca.pem");
  sec.cert = sec.file("cert.pem");
  sec.key = sec.file("key.pem");
  return sec;
}

// A broker client's: security=tls only (mutual TLS, DIR/ca.pem to verify the broker,
// DIR/cert.pem and DIR/key.pem its own certificate).
inline Security tls_options(const Options &options, Refusals &refuse) {
  return security_options(options, refuse, {"tls"},
                          "the only mode is tls (mutual TLS to the broker)");
}

// When connecting: fails naming the first of the folder's files that cannot be read.
inline void require_files(const Security &sec, std::initializer_list<const char *> names = {
                                                   "ca.pem", "cert.pem", "key.pem"}) {
  for (const char *name : names)
    if (access(sec.file(name).c_str(), R_OK) != 0)
      fail("security=%s: %s is missing or unreadable", sec.mode.c_str(), sec.file(name).c_str());
}

}  // namespace psb::sdk

#endif  // PSBENCH_SDK_SECURITY_HPP
