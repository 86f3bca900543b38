#include "clock_echo.hpp"

#include <unistd.h>

#include <cstdio>

#include "clock.hpp"

namespace psb {

namespace {
// Bounds, so that a caller that neither writes nor closes cannot keep it forever.
constexpr int kMaxRequests = 100'000;
constexpr int64_t kMaxSeconds = 120;

bool write_all(const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = write(STDOUT_FILENO, data, size);
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}
}  // namespace

int run_clock_echo() {
  // Unbuffered reads and writes: a stdio buffer would hold an answer back, and the time
  // it waited would count as network.
  if (!write_all("CLOCK\n", 6)) return 0;
  const int64_t end = now_ns() + seconds_to_ns(kMaxSeconds);
  char in[64];
  char out[32];
  for (int i = 0; i < kMaxRequests; ++i) {
    ssize_t n = read(STDIN_FILENO, in, sizeof in);
    if (n <= 0) break;
    const int64_t t = now_ns();  // stamped as soon as the request is here
    int len = std::snprintf(out, sizeof out, "%lld\n", static_cast<long long>(t));
    for (ssize_t c = 0; c < n; ++c) {  // one answer per line, should two arrive at once
      if (in[c] == '\n' && !write_all(out, size_t(len))) return 0;
    }
    if (t > end) break;
  }
  return 0;
}

}  // namespace psb
