// The command line the ping-pong probes share: "ping|pong [--domain D] [--topic T]
// [--size S] [--seconds N] [--warmup N]", a probe's own flags handed to it.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace probe {

struct RoundArgs {
  std::string role, topic;
  size_t size = 64;  // psbench message size, the 32-byte header included
  double seconds = 3;
  long domain = 0;
  long warmup = 1000;  // unmeasured round trips, as psbench's ping
};

// Exits 2 after "NAME: WHY" and the usage line: the shared flags, then the probe's own.
[[noreturn]] inline void exit_usage(const char *name, const char *why, const char *own_flags) {
  std::fprintf(stderr,
               "%s: %s\nusage: %s ping|pong [--domain D] [--topic T] [--size S] [--seconds N] "
               "[--warmup N] %s\n",
               name, why, name, own_flags);
  std::exit(2);
}

// Fills `a` from argv; `more(flag, value)` takes a flag the shared ones are not and says
// whether it knew it (value() reads the flag's value); `usage(why)` does not return.
template <class Usage, class More>
void parse_round_args(int argc, char **argv, RoundArgs &a, Usage usage, More more) {
  if (argc < 2) usage("no role");
  a.role = argv[1];
  if (a.role != "ping" && a.role != "pong") usage("the role is ping or pong");
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("no value after " + k).c_str());
      return argv[++i];
    };
    if (k == "--domain")
      a.domain = std::stol(value());
    else if (k == "--topic")
      a.topic = value();
    else if (k == "--size")
      a.size = std::stoul(value());
    else if (k == "--seconds")
      a.seconds = std::stod(value());
    else if (k == "--warmup")
      a.warmup = std::stol(value());
    else if (!more(k, value))
      usage(("unknown argument " + k).c_str());
  }
  if (a.size < 32) usage("--size is at least 32 (the psbench header)");
}

// The command line of the probes whose one flag of their own is --reliable (reliable
// instead of the driver's default best effort).
struct ReliableArgs : RoundArgs {
  bool reliable = false;
};

template <class Usage>
ReliableArgs parse_reliable_args(int argc, char **argv, const char *topic, long domain,
                                 Usage usage) {
  ReliableArgs a;
  a.topic = topic;
  a.domain = domain;
  parse_round_args(argc, argv, a, usage, [&a](const std::string &k, auto &) {
    if (k != "--reliable") return false;
    a.reliable = true;
    return true;
  });
  return a;
}

}  // namespace probe
