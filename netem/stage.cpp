#include "stage.hpp"

#include <time.h>

#include <algorithm>

namespace netdelay {

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Stage::Stage(const Options& o)
    : ring_(o.limit),
      clock_(o.delay_us, o.jitter_us, o.seed),
      loss_ppm_(o.loss_ppm),
      loss_draws_(o.seed ^ 0x6c6f7373u) {}

void Stage::on_packet(uint32_t id) {
  ++counts_.packets;
  if (loss_ppm_ != 0 && ppm_(loss_draws_) < loss_ppm_) {
    ++counts_.dropped_for_loss;
    queue_->drop(id);
    return;
  }
  if (ring_.full()) {
    ++counts_.dropped_over_limit;
    queue_->drop(id);
    return;
  }
  int64_t now = monotonic_ns();
  ring_.push({id, now, clock_.release_for(now)});
  // With no delay due, leave at once rather than after the rest of the batch.
  release_due(now);
}

void Stage::release_due(int64_t now_ns) {
  while (!ring_.empty() && ring_.front().release_ns <= now_ns) accept_front(now_ns);
}

void Stage::release_all() {
  int64_t now = monotonic_ns();
  while (!ring_.empty()) accept_front(now);
}

void Stage::accept_front(int64_t now_ns) {
  const Held& h = ring_.front();
  queue_->accept(h.id);
  counts_.max_hold_ns = std::max(counts_.max_hold_ns, now_ns - h.arrival_ns);
  ring_.pop();
}

}  // namespace netdelay
