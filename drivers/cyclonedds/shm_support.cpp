#include "shm_support.h"

#include <dirent.h>

#include <cstdio>
#include <cstring>

#include "settings.h"

extern "C" {
#include <iceoryx_binding_c/config.h>
}

namespace psbcyc {

bool roudi_running() {
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

uint64_t iox_max_publisher_history() { return iox_cfg_max_publisher_history(); }

uint64_t cdr_size(const Settings &s) {
  if (s.type == DataType::bytes) return s.max_payload + 8;
  return 40 + uint64_t{120} * s.elements;
}

}  // namespace psbcyc
