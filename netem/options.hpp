// The command line of psbench-netdelay: what to delay and by how much.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace netdelay {

struct Options {
  uint16_t queue = 0;
  int64_t delay_us = 0;
  int64_t jitter_us = 0;
  uint64_t seed = 1;  // fixed by default so that a run's jitter can be repeated
  uint32_t limit = 10000;
};

// Parses argv. On bad arguments returns nullopt and sets `error` to one line saying what
// is wrong; on --help returns nullopt with `error` empty and `help` set.
std::optional<Options> parse_options(int argc, char** argv, std::string& error, bool& help);

const char* usage();

}  // namespace netdelay
