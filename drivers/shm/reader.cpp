#include "reader.h"

#include <chrono>
#include <climits>
#include <memory>

#include "psbench/driver_support.h"
#include "futex.h"

namespace psbshm {

Reader *Reader::create(Context *ctx, const char *topic, psb_on_data on_data,
                       void *user, psb_error *err) {
  const Settings &s = ctx->settings;
  if ((on_data != nullptr) != (s.notify == PSB_NOTIFY_LISTENER)) {
    psb_set_error(err, "shm: on_data must be given exactly in listener mode");
    return nullptr;
  }
  std::string name;
  if (!segment_name(s.run_id, topic, &name, err))
    return nullptr;
  std::unique_ptr<Reader> r(new Reader());
  r->is_reader = true;
  r->reliable_ = s.reliability == PSB_RELIABLE;
  r->wakeup_ = s.wakeup;
  r->on_data_ = on_data;
  r->user_ = user;
  if (!segment_open(name, {s.max_payload, s.depth, s.reliability}, &r->seg_,
                    err))
    return nullptr;
  r->ring_.bind(r->seg_);
  SegmentHeader *h = r->seg_.hdr;
  if (h->readers.fetch_add(1, std::memory_order_acq_rel) != 0) {
    h->readers.fetch_sub(1, std::memory_order_acq_rel);
    psb_set_error(err,
              "shm: topic '%s' already has a reader; the shm driver is one "
              "writer, one reader per topic (or a killed run with this run_id "
              "left %s in /dev/shm)",
              topic, name.c_str());
    return nullptr;
  }
  r->attached_ = true;
  // Volatile: skip whatever was written before this reader existed.
  r->tail_ = h->head.load(std::memory_order_acquire);
  r->head_cache_ = r->tail_;
  r->idx_ = r->tail_ % r->ring_.count;
  h->tail.store(r->tail_, std::memory_order_seq_cst);
  if (h->writer_waiting.exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake(&h->tail, INT_MAX);
  if (on_data != nullptr)
    r->thread_ = std::thread([p = r.get()] { p->listen(); });
  ctx->link(r.get());
  return r.release();
}

Reader::~Reader() {
  if (ctx != nullptr)
    ctx->unlink(this);
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
    seg_.name.clear(); // not ours to unlink
  }
  segment_close(&seg_);
}

int Reader::matched_writers() const {
  return seg_.hdr->writers.load(std::memory_order_acquire);
}

void Reader::advance() {
  tail_ = ring_next(tail_, ring_.modulus);
  idx_ = ring_.next_index(idx_);
  held_ = false;
  SegmentHeader *h = ring_.hdr;
  if (!reliable_) { // a best_effort writer never sleeps on tail
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
  if (held_)
    advance();
}

bool Reader::wait_for_data(int64_t deadline_ns, bool listener) {
  SegmentHeader *h = ring_.hdr;
  for (;;) {
    if (listener && stop_.load(std::memory_order_acquire))
      return false;
    if (wakeup_ == Wakeup::spin) {
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        head_cache_ = h->head.load(std::memory_order_acquire);
        if (head_cache_ != tail_)
          return true;
      }
      if (deadline_ns >= 0 && now_ns() >= deadline_ns)
        return false;
      continue;
    }
    int64_t rel = -1;
    if (deadline_ns >= 0) {
      rel = deadline_ns - now_ns();
      if (rel <= 0)
        return false;
    }
    // Announce the sleep, then re-check: the writer stores head before it
    // reads reader_waiting (both seq_cst), so one of us sees the other.
    h->reader_waiting.store(1, std::memory_order_seq_cst);
    const uint32_t seen = h->head.load(std::memory_order_seq_cst);
    if (seen == tail_ && !(listener && stop_.load(std::memory_order_seq_cst)))
      futex_wait(&h->head, seen, rel);
    h->reader_waiting.store(0, std::memory_order_relaxed);
    head_cache_ = h->head.load(std::memory_order_acquire);
    if (head_cache_ != tail_)
      return true;
  }
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len,
                 psb_error *err) {
  if (on_data_ != nullptr) {
    psb_set_error(err, "shm: take() is not used in listener mode");
    return -1;
  }
  if (held_)
    advance();
  if (head_cache_ == tail_) {
    head_cache_ = ring_.hdr->head.load(std::memory_order_acquire);
    if (head_cache_ == tail_) {
      if (timeout_ns == 0)
        return 0;
      if (!wait_for_data(timeout_ns < 0 ? -1 : now_ns() + timeout_ns, false))
        return 0;
    }
  }
  held_ = true;
  const uint64_t n = *ring_.slot_len(idx_);
  if (n > ring_.slot_size) {
    psb_set_error(err, "shm: corrupt slot in %s: length %llu > max_payload %llu",
              seg_.name.c_str(), static_cast<unsigned long long>(n),
              static_cast<unsigned long long>(ring_.slot_size));
    return -1;
  }
  *data = ring_.slot_data(idx_);
  *len = static_cast<size_t>(n);
  return 1;
}

void Reader::listen() {
  while (!stop_.load(std::memory_order_acquire)) {
    if (head_cache_ == tail_) {
      head_cache_ = ring_.hdr->head.load(std::memory_order_acquire);
      if (head_cache_ == tail_ && !wait_for_data(-1, true))
        continue; // stopping
    }
    const uint64_t n = *ring_.slot_len(idx_);
    if (n <= ring_.slot_size) // a corrupt length is skipped, never delivered
      on_data_(user_, ring_.slot_data(idx_), static_cast<size_t>(n));
    advance();
  }
  exited_.store(true, std::memory_order_release);
}

} // namespace psbshm
