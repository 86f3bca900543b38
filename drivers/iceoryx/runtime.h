// The one iceoryx runtime of a process (iceoryx allows one; every context of the
// process shares it: README, "Names, runtime, contexts"), RouDi's presence, names, the
// version, and the driver context.
#ifndef PSBENCH_ICEORYX_RUNTIME_H
#define PSBENCH_ICEORYX_RUNTIME_H

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_hoofs/platform/platform_settings.hpp"
#include "iceoryx_posh/capro/service_description.hpp"
#include "iceoryx_posh/iceoryx_posh_types.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "iceoryx_posh/runtime/service_discovery.hpp"
#include "iceoryx_posh/version/version_info.hpp"
#include "psbench/sdk.hpp"
#include "settings.h"

namespace psbiox {

using psb::sdk::fail;

// s itself when it fits in max characters, else a prefix and a hash of all of s. The
// hash's offset basis is a digit short of FNV-1a-64's standard one: kept, so that
// shortened names stay what they were.
inline std::string fit(const std::string &s, size_t max) {
  return psb::sdk::shortened(s, max, 1469598103934665603ull);
}

inline std::string roudi_socket_path() {
  return std::string(iox::platform::IOX_UDS_SOCKET_PATH_PREFIX) +
         iox::roudi::IPC_CHANNEL_ROUDI_NAME;
}

// True when a RouDi accepts clients: its socket (/tmp/roudi) takes a connection.
inline bool roudi_running() {
  const std::string path = roudi_socket_path();
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // A datagram connect only names the peer: nothing is sent to RouDi.
  const bool up = connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr) == 0;
  close(fd);
  return up;
}

// Registers this process with RouDi once (name from the run id and the pid); later
// calls return at once. Throws psb::sdk::Error when RouDi is not running: iceoryx
// itself would wait 60 s for it and then abort the process.
inline void ensure_runtime(const std::string &run_id) {
  static std::once_flag once;  // not done when the call throws: the next one tries again
  std::call_once(once, [&] {
    if (!roudi_running())
      fail(
          "iox-roudi is not running (nothing listens on %s); psbench starts it for runs "
          "of this driver, or start iox-roudi yourself first",
          roudi_socket_path().c_str());
    // iceoryx logs to stderr; its default for applications includes debug lines.
    iox::log::LogManager::GetLogManager().SetDefaultLogLevel(
        iox::log::LogLevel::kWarn, iox::log::LogLevelOutput::kHideLogLevel);
    // The name is also a socket in /tmp: the run id (shortened if long) and the pid.
    const std::string name = "psbench_" + fit(run_id, 48) + "_" + std::to_string(getpid());
    iox::runtime::PoshRuntime::initRuntime(
        iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name.c_str()));
  });
}

// ("psbench", run id, topic): the run id keeps concurrent runs apart. Names longer than
// iceoryx's 100-character IdString (and iox::RuntimeName_t) are shortened by fit().
inline iox::capro::ServiceDescription service_for(const std::string &run_id,
                                                  const std::string &topic) {
  using Id = iox::capro::IdString_t;
  return iox::capro::ServiceDescription(Id(iox::cxx::TruncateToCapacity, "psbench"),
                                        Id(iox::cxx::TruncateToCapacity, fit(run_id, 100).c_str()),
                                        Id(iox::cxx::TruncateToCapacity, fit(topic, 100).c_str()));
}

// 1 when at least one publisher offers the service, else 0, from RouDi's service
// registry (one iox::runtime::ServiceDiscovery per process): a subscriber cannot tell
// (README, end of "QoS").
inline int publishers_offering(const iox::capro::ServiceDescription &service) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  // Created on first use, after the runtime (so destroyed before it at exit).
  static iox::runtime::ServiceDiscovery discovery;
  int found = 0;
  discovery.findService(
      service.getServiceIDString(), service.getInstanceIDString(), service.getEventIDString(),
      [&](const iox::capro::ServiceDescription &) { ++found; },
      iox::popo::MessagingPattern::PUB_SUB);
  return found > 0 ? 1 : 0;
}

// The version of the libiceoryx_posh loaded, asked at run time, e.g.
// "2.0.3 (libiceoryx_posh built 2023-02-06T15:53:11Z)"; the SDK keeps it.
inline std::string library_version() {
  // VersionInfo keeps its fields protected; getCurrentVersion() is compiled into the
  // library, so this reports the library actually loaded, not the headers.
  struct Loaded : iox::version::VersionInfo {
    Loaded() : VersionInfo(getCurrentVersion()) {}
    std::string text() const {
      const auto n = [](auto v) { return std::to_string(unsigned(v)); };
      return n(m_versionMajor) + "." + n(m_versionMinor) + "." + n(m_versionPatch) +
             (m_versionTweak != 0 ? "." + n(m_versionTweak) : "") + " (libiceoryx_posh built " +
             m_buildDateString.c_str() + ")";
    }
  };
  return Loaded().text();
}

// A driver context (one per role): the run's settings. Contexts of one process share
// the process's runtime; the SDK destroys the endpoints a caller left open before the
// context.
class Context {
 public:
  // Validates cfg and registers the process with RouDi (once); throws if either fails.
  explicit Context(const psb_config &cfg)
      : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {
    ensure_runtime(settings.run_id);
  }

  const Settings settings;
};

}  // namespace psbiox

#endif
