// What Cyclone's iceoryx shared-memory path (transport shm) needs and allows.
#pragma once

#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "settings.h"

extern "C" {
#include <iceoryx_binding_c/config.h>
}

namespace psbcyc {

// Whether iceoryx's RouDi daemon runs on this host: without it Cyclone would wait for it.
inline bool roudi_running() {
  DIR *proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool found = false;
  while (!found) {
    const dirent *e = readdir(proc);
    if (e == nullptr) break;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], comm[64] = "";
    std::snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    if (FILE *f = std::fopen(path, "r")) {
      if (std::fgets(comm, sizeof comm, f) != nullptr) found = std::strcmp(comm, "iox-roudi\n") == 0;
      std::fclose(f);
    }
  }
  closedir(proc);
  return found;
}

// The deepest transient_local history an iceoryx publisher keeps (iceoryx's build
// setting, asked from the library). Cyclone 0.10.2 silently falls back to the network
// for deeper ones.
inline uint64_t iox_max_publisher_history() { return iox_cfg_max_publisher_history(); }

// The largest serialized sample (CDR, 4-byte encapsulation header included) that fits
// the largest chunk of the mempools iox-roudi sets up without a configuration file
// (4 MiB of payload), after Cyclone's own header in the same chunk. Asking iceoryx for
// a larger chunk aborts the process, so check() refuses such runs. Found by experiment
// with iceoryx 2.0.3 and Cyclone 0.10.2: the largest bytes message that passes is
// 4194236 bytes (see README).
constexpr uint64_t kShmMaxCdrSize = 4194236 + 8;

// The serialized size of the run's largest sample: bytes, a message of N bytes is
// encapsulation 4 + header 32 + sequence length 4 + N - 32; complex, encapsulation 4 +
// header 32 + sequence length 4 + per Outer (length 4 + sequence length 4 + 4 Inner of
// string length 4 + 17 characters with NUL + 3 padding + index 4).
inline uint64_t cdr_size(const Settings &s) {
  if (s.type == DataType::bytes) return s.max_payload + 8;
  return 40 + uint64_t{120} * s.elements;
}

}  // namespace psbcyc
