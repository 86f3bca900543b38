// The delay stage itself: takes each packet as it is read, holds it until its release
// time and then accepts it; over the limit, drops it at once. Counts what the exit line
// reports.
#pragma once

#include <cstdint>
#include <random>

#include "hold_ring.hpp"
#include "nfqueue.hpp"
#include "options.hpp"
#include "release_clock.hpp"

namespace netdelay {

int64_t monotonic_ns();

struct Counts {
  uint64_t packets = 0;             // every packet read from the queue
  uint64_t dropped_over_limit = 0;  // of those, dropped because `limit` were held
  uint64_t dropped_for_loss = 0;    // of those, dropped at random (--loss-ppm)
  int64_t max_hold_ns = 0;          // longest time from reading a packet to accepting it
};

class Stage : public PacketSink {
 public:
  explicit Stage(const Options& options);
  void attach(NfQueue& queue) { queue_ = &queue; }

  void on_packet(uint32_t id) override;
  // Accepts every held packet whose release time is <= now.
  void release_due(int64_t now_ns);
  // Accepts everything still held, due or not (on exit, so nothing stays stuck).
  void release_all();
  // CLOCK_MONOTONIC time of the next release, or -1 when nothing is held.
  int64_t next_release_ns() const { return ring_.empty() ? -1 : ring_.front().release_ns; }
  const Counts& counts() const { return counts_; }

 private:
  void accept_front(int64_t now_ns);

  NfQueue* queue_ = nullptr;
  HoldRing ring_;
  ReleaseClock clock_;
  Counts counts_;
  const uint32_t loss_ppm_;
  std::mt19937_64 loss_draws_;  // its own, so that loss does not shift the jitter's draws
  std::uniform_int_distribution<uint32_t> ppm_{0, 999'999};
};

}  // namespace netdelay
