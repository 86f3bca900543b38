// A broker probe's HOST:PORT argument (the broker or server bench/truth started).
#pragma once
#include <cstdlib>
#include <string>

namespace probe {

struct HostPort {
  std::string host;
  int port = 0;
};

// Split at the last colon; false when there is none.
inline bool split_host_port(const std::string &text, HostPort &out) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  out.host = text.substr(0, colon);
  out.port = std::atoi(text.c_str() + colon + 1);
  return true;
}

}  // namespace probe
