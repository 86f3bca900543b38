#include "writer.h"

#include <climits>
#include <new>

#include "futex.h"
#include "psbench/sdk.hpp"

namespace psbshm {
using psb::sdk::fail;

namespace {
constexpr int kSpinBeforeSleep = 256;           // pause loops before the futex
constexpr int64_t kSleepSliceNs = 100'000'000;  // re-check the reader count
}  // namespace

Writer::Writer(Context &ctx, const char *topic) {
  const Settings &s = ctx.settings;
  const std::string name = segment_name(s.run_id, topic);
  reliable_ = s.qos.reliability == PSB_RELIABLE;
  wakeup_ = s.wakeup;
  if (s.use_loan) scratch_.reset(new unsigned char[s.max_payload]);
  segment_open(name, {s.max_payload, s.depth, s.qos.reliability}, &seg_);
  ring_.bind(seg_);
  SegmentHeader *h = seg_.hdr;
  if (h->writers.fetch_add(1, std::memory_order_acq_rel) != 0) {
    h->writers.fetch_sub(1, std::memory_order_acq_rel);
    tear_down();  // unmaps; the other writer's side keeps the name
    fail(
        "topic '%s' already has a writer; the shm driver is one writer, one reader "
        "per topic (or a killed run with this run_id left %s in /dev/shm)",
        topic, name.c_str());
  }
  attached_ = true;
  head_ = h->head.load(std::memory_order_acquire);
  idx_ = head_ % ring_.count;
  tail_cache_ = h->tail.load(std::memory_order_acquire);
}

Writer::~Writer() { tear_down(); }

void Writer::tear_down() {
  if (attached_)
    seg_.hdr->writers.fetch_sub(1, std::memory_order_acq_rel);
  else
    seg_.name.clear();  // not ours to unlink
  segment_close(&seg_);
}

int Writer::matched() const { return seg_.hdr->readers.load(std::memory_order_acquire); }

int Writer::drop() {
  ++drops_;
  seg_.hdr->drops.store(drops_, std::memory_order_relaxed);
  return 0;
}

int Writer::reserve() {
  if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count) return 1;
  tail_cache_ = ring_.hdr->tail.load(std::memory_order_acquire);
  if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count) return 1;
  if (!reliable_) return drop();
  return wait_for_room();
}

int Writer::wait_for_room() {
  SegmentHeader *h = ring_.hdr;
  for (int i = 0; i < kSpinBeforeSleep; ++i) {
    cpu_relax();
    tail_cache_ = h->tail.load(std::memory_order_acquire);
    if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count) return 1;
  }
  const int64_t deadline = now_ns() + kReliableBlockNs;
  for (;;) {
    if (h->readers.load(std::memory_order_acquire) == 0) return drop();
    tail_cache_ = h->tail.load(std::memory_order_acquire);
    if (ring_used(head_, tail_cache_, ring_.modulus) < ring_.count) return 1;
    const int64_t now = now_ns();
    if (now >= deadline)
      fail(
          "reliable write waited %lld s for the reader to free a slot of %s; is the "
          "reader still taking?",
          static_cast<long long>(kReliableBlockNs / 1000000000), seg_.name.c_str());
    if (wakeup_ == Wakeup::spin) {
      for (int i = 0; i < 64; ++i) cpu_relax();
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
  SegmentHeader *h = ring_.hdr;
  // Release (as seq_cst) publishes the slot; seq_cst orders it before the
  // reader_waiting load, pairing with the reader's flag store + head load.
  h->head.store(head_, std::memory_order_seq_cst);
  if (h->reader_waiting.load(std::memory_order_seq_cst) != 0 &&
      h->reader_waiting.exchange(0, std::memory_order_seq_cst) != 0)
    futex_wake(&h->head, INT_MAX);
}

void Writer::write(const void *data, size_t len) {
  if (len > ring_.slot_size)
    fail("message of %zu bytes exceeds max_payload %llu", len,
         static_cast<unsigned long long>(ring_.slot_size));
  if (reserve() == 0) return;  // dropped
  __builtin_memcpy(ring_.slot_data(idx_), data, len);
  publish(len);
}

void *Writer::loan(size_t len) {
  if (len > ring_.slot_size)
    fail("loan of %zu bytes exceeds max_payload %llu", len,
         static_cast<unsigned long long>(ring_.slot_size));
  if (reserve() == 0) {  // dropped: hand out scratch memory, write_loan discards it
    if (!scratch_)
      fail("ring of %s is full and loans were not enabled (use_loan) at open", seg_.name.c_str());
    return scratch_.get();
  }
  return ring_.slot_data(idx_);
}

void Writer::write_loan(void *sample, size_t len) {
  if (scratch_ && sample == scratch_.get()) return;  // this sample was dropped at loan()
  publish(len);  // the SDK checked that sample is the slot loan() returned, len no longer
}

}  // namespace psbshm
