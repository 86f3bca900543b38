#include "writer.h"

#include <climits>
#include <new>

#include "psbench/driver_support.h"
#include "futex.h"

namespace psbshm {
namespace {
constexpr int kSpinBeforeSleep = 256;     // pause loops before the futex
constexpr int64_t kSleepSliceNs = 100'000'000; // re-check the reader count
} // namespace

Writer *Writer::create(Context *ctx, const char *topic, psb_error *err) {
  const Settings &s = ctx->settings;
  std::string name;
  if (!segment_name(s.run_id, topic, &name, err))
    return nullptr;
  std::unique_ptr<Writer> w(new Writer());
  w->reliable_ = s.reliability == PSB_RELIABLE;
  w->wakeup_ = s.wakeup;
  if (s.use_loan)
    w->scratch_.reset(new unsigned char[s.max_payload]);
  if (!segment_open(name, {s.max_payload, s.depth, s.reliability}, &w->seg_,
                    err))
    return nullptr;
  w->ring_.bind(w->seg_);
  SegmentHeader *h = w->seg_.hdr;
  if (h->writers.fetch_add(1, std::memory_order_acq_rel) != 0) {
    h->writers.fetch_sub(1, std::memory_order_acq_rel);
    psb_set_error(err,
              "shm: topic '%s' already has a writer; the shm driver is one "
              "writer, one reader per topic (or a killed run with this run_id "
              "left %s in /dev/shm)",
              topic, name.c_str());
    return nullptr; // ~Writer unmaps; the other writer's side keeps the name
  }
  w->attached_ = true;
  w->head_ = h->head.load(std::memory_order_acquire);
  w->idx_ = w->head_ % w->ring_.count;
  w->tail_cache_ = h->tail.load(std::memory_order_acquire);
  ctx->link(w.get());
  return w.release();
}

Writer::~Writer() {
  if (ctx != nullptr)
    ctx->unlink(this);
  if (attached_)
    seg_.hdr->writers.fetch_sub(1, std::memory_order_acq_rel);
  else
    seg_.name.clear(); // not ours to unlink
  segment_close(&seg_);
}

int Writer::matched_readers() const {
  return seg_.hdr->readers.load(std::memory_order_acquire);
}

int Writer::drop() {
  ++drops_;
  seg_.hdr->drops.store(drops_, std::memory_order_relaxed);
  return 0;
}

int Writer::reserve(psb_error *err) {
  if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count)
    return 1;
  tail_cache_ = ring_.hdr->tail.load(std::memory_order_acquire);
  if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count)
    return 1;
  if (!reliable_)
    return drop();
  return wait_for_room(err);
}

int Writer::wait_for_room(psb_error *err) {
  SegmentHeader *h = ring_.hdr;
  for (int i = 0; i < kSpinBeforeSleep; ++i) {
    cpu_relax();
    tail_cache_ = h->tail.load(std::memory_order_acquire);
    if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count)
      return 1;
  }
  const int64_t deadline = now_ns() + kReliableBlockNs;
  for (;;) {
    if (h->readers.load(std::memory_order_acquire) == 0)
      return drop();
    tail_cache_ = h->tail.load(std::memory_order_acquire);
    if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count)
      return 1;
    const int64_t now = now_ns();
    if (now >= deadline) {
      psb_set_error(err,
                "shm: reliable write waited %lld s for the reader to free a "
                "slot of %s; is the reader still taking?",
                static_cast<long long>(kReliableBlockNs / 1000000000),
                seg_.name.c_str());
      return -1;
    }
    if (wakeup_ == Wakeup::spin) {
      for (int i = 0; i < 64; ++i)
        cpu_relax();
      continue;
    }
    // Announce the sleep, then re-check: the reader stores tail before it
    // reads writer_waiting (both seq_cst), so one of us sees the other.
    h->writer_waiting.store(1, std::memory_order_seq_cst);
    const uint32_t t = h->tail.load(std::memory_order_seq_cst);
    if (ring_used(head_, t, ring_.modulus) < ring_.count) {
      tail_cache_ = t;
      h->writer_waiting.store(0, std::memory_order_relaxed);
      return 1;
    }
    const int64_t left = deadline - now;
    futex_wait(&h->tail, t, left < kSleepSliceNs ? left : kSleepSliceNs);
    h->writer_waiting.store(0, std::memory_order_relaxed);
  }
}

void Writer::publish(size_t len) {
  *ring_.slot_len(idx_) = len;
  head_ = ring_next(head_, ring_.modulus);
  idx_ = ring_.next_index(idx_);
  loaned_ = false;
  SegmentHeader *h = ring_.hdr;
  // Release (as seq_cst) publishes the slot; seq_cst orders it before the
  // reader_waiting load, pairing with the reader's flag store + head load.
  h->head.store(head_, std::memory_order_seq_cst);
  if (h->reader_waiting.load(std::memory_order_seq_cst) != 0 &&
      h->reader_waiting.exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake(&h->head, INT_MAX);
}

int Writer::write(const void *data, size_t len, psb_error *err) {
  if (len > ring_.slot_size) {
    psb_set_error(err, "shm: message of %zu bytes exceeds max_payload %llu", len,
              static_cast<unsigned long long>(ring_.slot_size));
    return -1;
  }
  const int r = reserve(err);
  if (r <= 0)
    return r;
  __builtin_memcpy(ring_.slot_data(idx_), data, len);
  publish(len);
  return 0;
}

void *Writer::loan(size_t len, psb_error *err) {
  if (len > ring_.slot_size) {
    psb_set_error(err, "shm: loan of %zu bytes exceeds max_payload %llu", len,
              static_cast<unsigned long long>(ring_.slot_size));
    return nullptr;
  }
  const int r = reserve(err);
  if (r < 0)
    return nullptr;
  if (r == 0) { // dropped: hand out scratch memory, write_loan discards it
    if (!scratch_) {
      psb_set_error(err, "shm: ring of %s is full and loans were not enabled "
                     "(use_loan) at open",
                seg_.name.c_str());
      return nullptr;
    }
    return scratch_.get();
  }
  loaned_ = true;
  return ring_.slot_data(idx_);
}

int Writer::write_loan(void *sample, size_t len, psb_error *err) {
  if (scratch_ && sample == scratch_.get())
    return 0; // this sample was dropped at loan()
  if (!loaned_ || sample != ring_.slot_data(idx_)) {
    psb_set_error(err, "shm: write_loan got a sample that loan() did not return "
                   "(or that was already written)");
    return -1;
  }
  if (len > ring_.slot_size) {
    psb_set_error(err, "shm: write_loan of %zu bytes exceeds max_payload %llu",
              len, static_cast<unsigned long long>(ring_.slot_size));
    return -1;
  }
  publish(len);
  return 0;
}

} // namespace psbshm
