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
  uint64_t seed = 1;  // fixed by default so that a run's jitter (and loss) can be repeated
  // Each packet dropped with this probability, in millionths: the verdict comes after the
  // send returned, so a sender sees a loss on the wire, not a failed send (as an iptables
  // DROP on OUTPUT would give it: EPERM).
  uint32_t loss_ppm = 0;
  uint32_t limit = 10000;
};

// Parses argv. On bad arguments returns nullopt and sets `error` to one line saying what
// is wrong; on --help returns nullopt with `error` empty and `help` set.
std::optional<Options> parse_options(int argc, char** argv, std::string& error, bool& help);

const char* usage();

}  // namespace netdelay
