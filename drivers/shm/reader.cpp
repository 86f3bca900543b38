#include "reader.h"

#include <chrono>
#include <climits>
#include <memory>

#include "futex.h"

namespace psbshm {

using psb::sdk::fail;

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener listener) {
  const Settings &s = ctx.settings;
  if (bool(listener) != (s.notify == PSB_NOTIFY_LISTENER))
    fail("on_data must be given exactly in listener mode");
  const std::string name = segment_name(s.run_id, topic);
  reliable_ = s.qos.reliability == PSB_RELIABLE;
  wakeup_ = s.wakeup;
  on_data_ = listener;
  segment_open(name, {s.max_payload, s.depth, s.qos.reliability}, &seg_);
  ring_.bind(seg_);
  SegmentHeader *h = seg_.hdr;
  if (h->readers.fetch_add(1, std::memory_order_acq_rel) != 0) {
    h->readers.fetch_sub(1, std::memory_order_acq_rel);
    tear_down();
    fail(
        "topic '%s' already has a reader; the shm driver is one writer, one reader "
        "per topic (or a killed run with this run_id left %s in /dev/shm)",
        topic, name.c_str());
  }
  attached_ = true;
  // Volatile: skip whatever was written before this reader existed.
  tail_ = h->head.load(std::memory_order_acquire);
  head_cache_ = tail_;
  idx_ = tail_ % ring_.count;
  h->tail.store(tail_, std::memory_order_seq_cst);
  if (h->writer_waiting.exchange(0, std::memory_order_seq_cst) != 0) futex_wake(&h->tail, INT_MAX);
  if (on_data_) {
    try {
      thread_ = std::thread([this] { listen(); });
    } catch (...) {
      tear_down();
      throw;
    }
  }
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() {
  if (thread_.joinable()) {
    stop_.store(true, std::memory_order_seq_cst);
    // The thread may be between its stop check and its futex_wait, where one
    // wake would be lost: keep waking until it has left.
    while (!exited_.load(std::memory_order_acquire)) {
      futex_wake(&ring_.hdr->head, INT_MAX);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    thread_.join();
  }
  if (attached_) {
    seg_.hdr->readers.fetch_sub(1, std::memory_order_seq_cst);
    // A reliable writer waiting for room sees that nobody reads any more.
    futex_wake(&seg_.hdr->tail, INT_MAX);
  } else {
    seg_.name.clear();  // not ours to unlink
  }
  segment_close(&seg_);
}

int Reader::matched() const { return seg_.hdr->writers.load(std::memory_order_acquire); }

void Reader::advance() {
  tail_ = ring_next(tail_, ring_.modulus);
  idx_ = ring_.next_index(idx_);
  held_ = false;
  SegmentHeader *h = ring_.hdr;
  if (!reliable_) {  // a best_effort writer never sleeps on tail
    h->tail.store(tail_, std::memory_order_release);
    return;
  }
  // seq_cst pairs with the writer's writer_waiting store + tail load.
  h->tail.store(tail_, std::memory_order_seq_cst);
  if (h->writer_waiting.load(std::memory_order_seq_cst) != 0 &&
      h->writer_waiting.exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake(&h->tail, INT_MAX);
}

void Reader::release() {
  if (held_) advance();
}

bool Reader::wait_for_data(int64_t deadline_ns, bool listener) {
  SegmentHeader *h = ring_.hdr;
  for (;;) {
    if (listener && stop_.load(std::memory_order_acquire)) return false;
    if (wakeup_ == Wakeup::spin) {
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        head_cache_ = h->head.load(std::memory_order_acquire);
        if (head_cache_ != tail_) return true;
      }
      if (deadline_ns >= 0 && now_ns() >= deadline_ns) return false;
      continue;
    }
    int64_t rel = -1;
    if (deadline_ns >= 0) {
      rel = deadline_ns - now_ns();
      if (rel <= 0) return false;
    }
    // Announce the sleep, then re-check: the writer stores head before it
    // reads reader_waiting (both seq_cst), so one of us sees the other.
    h->reader_waiting.store(1, std::memory_order_seq_cst);
    const uint32_t seen = h->head.load(std::memory_order_seq_cst);
    if (seen == tail_ && !(listener && stop_.load(std::memory_order_seq_cst)))
      futex_wait(&h->head, seen, rel);
    h->reader_waiting.store(0, std::memory_order_relaxed);
    head_cache_ = h->head.load(std::memory_order_acquire);
    if (head_cache_ != tail_) return true;
  }
}

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) fail("take() is not used in listener mode");
  if (held_) advance();
  if (head_cache_ == tail_) {
    head_cache_ = ring_.hdr->head.load(std::memory_order_acquire);
    if (head_cache_ == tail_) {
      if (timeout_ns == 0) return false;
      if (!wait_for_data(timeout_ns < 0 ? -1 : now_ns() + timeout_ns, false)) return false;
    }
  }
  held_ = true;
  const uint64_t n = *ring_.slot_len(idx_);
  if (n > ring_.slot_size)
    fail("corrupt slot in %s: length %llu > max_payload %llu", seg_.name.c_str(),
         static_cast<unsigned long long>(n), static_cast<unsigned long long>(ring_.slot_size));
  data = ring_.slot_data(idx_);
  len = static_cast<size_t>(n);
  return true;
}

void Reader::listen() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (head_cache_ == tail_) {
      head_cache_ = ring_.hdr->head.load(std::memory_order_acquire);
      if (head_cache_ == tail_ && !wait_for_data(-1, true)) continue;  // stopping
    }
    const uint64_t n = *ring_.slot_len(idx_);
    if (n <= ring_.slot_size)  // a corrupt length is skipped, never delivered
      on_data_(ring_.slot_data(idx_), static_cast<size_t>(n));
    advance();
  }
  exited_.store(true, std::memory_order_release);
}

}  // namespace psbshm
