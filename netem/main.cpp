// psbench-netdelay: holds the packets of one NFQUEUE for a delay (with jitter, keeping
// order) and then accepts them. The kernel here has no netem; this is psbench's delay
// stage for emulated links (docs/netdelay.md).
//
// One thread, one poll loop over three descriptors: the queue's socket (packets in), a
// timerfd armed for the next release (packets out), and a signalfd (SIGTERM/SIGINT, and
// the parent's death, end the run).
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "nfqueue.hpp"
#include "options.hpp"
#include "stage.hpp"

namespace {

using namespace netdelay;

// Signals arrive on a descriptor, so the loop sees them between packets, never inside
// a verdict.
int block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

// An orchestrator killed with SIGKILL cannot stop us; the kernel tells us instead.
// Returns false when the parent is already gone.
bool follow_parent() {
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  return getppid() == parent;
}

void arm(int timer, int64_t at_ns) {
  itimerspec spec{};  // all zero disarms
  if (at_ns >= 0) {
    // A zero it_value would disarm; an instant already past fires at once.
    if (at_ns == 0) at_ns = 1;
    spec.it_value.tv_sec = at_ns / 1'000'000'000;
    spec.it_value.tv_nsec = at_ns % 1'000'000'000;
  }
  timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void run(NfQueue& queue, Stage& stage, int timer, int signals) {
  pollfd fds[3] = {{queue.fd(), POLLIN, 0}, {timer, POLLIN, 0}, {signals, POLLIN, 0}};
  int64_t armed = -1;
  for (;;) {
    if (poll(fds, 3, -1) < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    if (fds[2].revents != 0) return;
    if (fds[1].revents != 0) {
      uint64_t expirations;
      (void)!read(timer, &expirations, sizeof expirations);
    }
    // Bounded, so a flood of arrivals cannot postpone releases that are due.
    for (int i = 0; i < 64 && queue.read_batch(); ++i) {
    }
    stage.release_due(monotonic_ns());
    int64_t next = stage.next_release_ns();
    if (next != armed) {
      arm(timer, next);
      armed = next;
    }
  }
}

void print_summary(const Options& o, const Counts& c, uint64_t overruns) {
  std::printf("{\"queue\":%u,\"packets\":%" PRIu64 ",\"dropped_over_limit\":%" PRIu64
              ",\"dropped_for_loss\":%" PRIu64 ",\"delay_us\":%" PRId64 ",\"jitter_us\":%" PRId64
              ",\"loss_ppm\":%u,\"max_hold_us\":%" PRId64 ",\"overruns\":%" PRIu64 "}\n",
              unsigned{o.queue}, c.packets, c.dropped_over_limit, c.dropped_for_loss, o.delay_us,
              o.jitter_us, unsigned{o.loss_ppm}, c.max_hold_ns / 1000, overruns);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  bool help = false;
  auto options = parse_options(argc, argv, error, help);
  if (!options) {
    if (help) {
      std::printf("%s\n", usage());
      return 0;
    }
    std::fprintf(stderr, "psbench-netdelay: %s (see --help)\n", error.c_str());
    return 2;
  }
  int signals = block_stop_signals();
  if (!follow_parent()) return 1;
  // The default 50 us timer slack would add up to 50 us to every release.
  prctl(PR_SET_TIMERSLACK, 1UL);
  int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (signals < 0 || timer < 0) {
    std::fprintf(stderr, "psbench-netdelay: cannot create descriptors: %s\n", std::strerror(errno));
    return 1;
  }
  Stage stage(*options);
  try {
    // Kernel room beyond our limit, so packets over it reach us and are counted when we
    // drop them, instead of being dropped by the kernel unseen.
    NfQueue queue(options->queue, options->limit + 1024, stage);
    stage.attach(queue);
    int status = 0;
    try {
      run(queue, stage, timer, signals);
      // Take what already waits in the socket, then let everything go before unbinding.
      for (int i = 0; i < 1024 && queue.read_batch(); ++i) {
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "psbench-netdelay: %s\n", e.what());
      status = 1;
    }
    stage.release_all();
    print_summary(*options, stage.counts(), queue.overruns());
    return status;
  } catch (const std::exception& e) {  // the queue could not be bound
    std::fprintf(stderr, "psbench-netdelay: %s\n", e.what());
    return 1;
  }
}
