#include "options.hpp"

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace netdelay {

namespace {

// A minute is far beyond any link psbench emulates; larger is surely a typo (ms for us).
constexpr int64_t kMaxDelayUs = 60'000'000;
// The ring holds `limit` entries and the kernel queue is sized from it.
constexpr uint64_t kMaxLimit = 1'000'000;

// Whole decimal number in [lo, hi], nothing else (no sign tricks, no trailing text).
bool parse_number(std::string_view text, uint64_t lo, uint64_t hi, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  std::string copy(text);
  errno = 0;
  unsigned long long v = std::strtoull(copy.c_str(), nullptr, 10);
  if (errno != 0 || v < lo || v > hi) return false;
  out = v;
  return true;
}

}  // namespace

const char* usage() {
  return "usage: psbench-netdelay --queue N --delay-us D [--jitter-us J] [--loss-ppm L] "
         "[--seed S] [--limit PACKETS]";
}

std::optional<Options> parse_options(int argc, char** argv, std::string& error, bool& help) {
  Options o;
  bool have_queue = false, have_delay = false;
  help = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view name = argv[i];
    if (name == "--help" || name == "-h") {
      help = true;
      return std::nullopt;
    }
    struct Spec {
      std::string_view name;
      uint64_t lo, hi;
    };
    static constexpr Spec specs[] = {
        {"--queue", 0, 65535},     {"--delay-us", 0, kMaxDelayUs}, {"--jitter-us", 0, kMaxDelayUs},
        {"--seed", 0, UINT64_MAX}, {"--limit", 1, kMaxLimit},      {"--loss-ppm", 0, 999'999},
    };
    const Spec* spec = nullptr;
    for (const Spec& s : specs)
      if (s.name == name) spec = &s;
    if (spec == nullptr) {
      error = "unknown argument '" + std::string(name) + "'";
      return std::nullopt;
    }
    if (i + 1 >= argc) {
      error = std::string(name) + " needs a value";
      return std::nullopt;
    }
    std::string_view text = argv[++i];
    uint64_t v = 0;
    if (!parse_number(text, spec->lo, spec->hi, v)) {
      error = std::string(name) + ": expected a whole number from " + std::to_string(spec->lo) +
              " to " + std::to_string(spec->hi) + ", got '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (name == "--queue") {
      o.queue = static_cast<uint16_t>(v);
      have_queue = true;
    } else if (name == "--delay-us") {
      o.delay_us = static_cast<int64_t>(v);
      have_delay = true;
    } else if (name == "--jitter-us") {
      o.jitter_us = static_cast<int64_t>(v);
    } else if (name == "--seed") {
      o.seed = v;
    } else if (name == "--loss-ppm") {
      o.loss_ppm = static_cast<uint32_t>(v);
    } else {
      o.limit = static_cast<uint32_t>(v);
    }
  }
  if (!have_queue || !have_delay) {
    error = !have_queue ? "--queue is required" : "--delay-us is required";
    return std::nullopt;
  }
  return o;
}

}  // namespace netdelay
