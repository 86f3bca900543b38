#include "writer.h"

#include <sched.h>
#include <time.h>

#include <cstring>

#include "iceoryx_posh/mepoo/chunk_settings.hpp"

#include "psbench/sdk.hpp"
#include "runtime.h"

namespace psbiox {
namespace {

using psb::sdk::fail;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The chunk size iceoryx needs for len bytes of payload (its header included).
uint64_t required_chunk_size(uint64_t len) {
  auto settings = iox::mepoo::ChunkSettings::create(static_cast<uint32_t>(len));
  return settings.has_error() ? UINT64_MAX : settings.value().requiredChunkSize();
}

}  // namespace

Writer::Writer(Context &ctx, const char *topic) {
  const Settings &s = ctx.settings;
  topic_ = topic;
  reliable_ = s.reliable;
  queue_capacity_ = s.queue_capacity;
  max_payload_ = s.max_payload;

  iox::popo::PublisherOptions options;
  options.historyCapacity = s.history;  // transient_local: kept for late joiners
  options.offerOnCreate = true;
  options.subscriberTooSlowPolicy = s.writer_waits_for_queue
                                        ? iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER
                                        : iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
  pub_.reset(new Publisher(service_for(s.run_id, topic), options));

  // A loan larger than every mempool's chunks would abort the process: find the
  // mempool for the largest message now, and refuse if there is none.
  iox::mepoo::MemoryManager &mm = pub_->memory();
  const uint64_t need = required_chunk_size(s.max_payload);
  const uint32_t pools = mm.getNumberOfMemPools();
  uint64_t largest = 0;
  bool fits = false;
  for (uint32_t i = 0; i < pools && !fits; ++i) {
    const auto info = mm.getMemPoolInfo(i);
    if (info.m_chunkSize > largest) largest = info.m_chunkSize;
    if (info.m_chunkSize >= need) {
      fits = true;
      cached_len_ = s.max_payload;
      cached_pool_ = i;
    }
  }
  if (!fits) {
    const uint64_t overhead = need - s.max_payload;
    fail("no RouDi mempool holds %llu-byte chunks (the largest holds %llu-byte payloads, "
         "%u mempools in all); psbench sizes RouDi for the experiment's largest message, a RouDi "
         "started by someone else may not",
         static_cast<unsigned long long>(s.max_payload),
         static_cast<unsigned long long>(largest > overhead ? largest - overhead : 0), pools);
  }
  ctx.link(this);
}

Writer::~Writer() {
  if (ctx != nullptr) ctx->unlink(this);
  if (loaned_ != nullptr) pub_->release(loaned_);
  pub_.reset();  // RouDi removes the port
}

int Writer::matched() { return pub_->subscriber_queues(); }

uint32_t Writer::pool_for(size_t len) {
  if (len == cached_len_) return cached_pool_;
  iox::mepoo::MemoryManager &mm = pub_->memory();
  const uint64_t need = required_chunk_size(len);
  const uint32_t pools = mm.getNumberOfMemPools();
  uint32_t pool = 0;
  while (pool + 1 < pools && mm.getMemPoolInfo(pool).m_chunkSize < need) ++pool;
  cached_len_ = len;
  cached_pool_ = pool;
  return pool;
}

bool Writer::pool_exhausted(uint32_t pool) {
  const auto info = pub_->memory().getMemPoolInfo(pool);
  return info.m_usedChunks >= info.m_numChunks;
}

void Writer::exhausted(uint32_t pool, size_t len) {
  const auto info = pub_->memory().getMemPoolInfo(pool);
  fail("RouDi's mempool of %u-byte chunks (for %zu-byte messages) is exhausted: all %u "
       "chunks are in use (each subscriber queue may hold %u samples, the history depth); give "
       "RouDi more chunks of this size, or lower the history depth",
       info.m_chunkSize, len, info.m_numChunks, queue_capacity_);
}

void Writer::wait_for_chunk(uint32_t pool, size_t len) {
  // Readers give chunks back as they take: spin briefly, then yield, then sleep.
  const int64_t deadline = now_ns() + kChunkWaitNs;
  for (uint64_t i = 0;; ++i) {
    if (!pool_exhausted(pool)) return;
    if (i < 64) {
      __builtin_ia32_pause();
    } else if (i < 1024) {
      sched_yield();
    } else {
      if (now_ns() >= deadline) break;
      timespec ts{0, 20'000};
      nanosleep(&ts, nullptr);
    }
  }
  const auto info = pub_->memory().getMemPoolInfo(pool);
  fail("reliable write of %zu bytes waited %lld s for a free chunk in RouDi's mempool of "
       "%u-byte chunks (all %u in use); is the reader still taking? Otherwise give RouDi more "
       "chunks of this size",
       len, static_cast<long long>(kChunkWaitNs / 1'000'000'000), info.m_chunkSize, info.m_numChunks);
}

void *Writer::acquire(size_t len) {
  const uint32_t pool = pool_for(len);
  for (;;) {
    // Checked first, so that an exhausted mempool costs no failing loan (iceoryx logs
    // every one of those).
    if (pool_exhausted(pool)) {
      if (!reliable_) exhausted(pool, len);
      wait_for_chunk(pool, len);
    }
    auto loaned = pub_->loan(static_cast<uint32_t>(len));
    if (!loaned.has_error()) return loaned.value();
    switch (loaned.get_error()) {
      case iox::popo::AllocationError::RUNNING_OUT_OF_CHUNKS:  // taken by someone else meanwhile
        if (!reliable_) exhausted(pool, len);
        continue;
      case iox::popo::AllocationError::TOO_MANY_CHUNKS_ALLOCATED_IN_PARALLEL:
        fail("publisher of %s holds too many loaned chunks at once", topic_.c_str());
      default:
        fail("loaning a %zu-byte chunk on %s failed (iceoryx AllocationError %d)", len, topic_.c_str(),
             static_cast<int>(loaned.get_error()));
    }
  }
}

void Writer::write(const void *data, size_t len) {
  if (len > max_payload_)
    fail("message of %zu bytes exceeds max_payload %llu", len, static_cast<unsigned long long>(max_payload_));
  void *chunk = acquire(len);
  std::memcpy(chunk, data, len);
  pub_->publish(chunk);
}

void *Writer::loan(size_t len) {
  if (len > max_payload_)
    fail("loan of %zu bytes exceeds max_payload %llu", len, static_cast<unsigned long long>(max_payload_));
  if (loaned_ != nullptr) {  // an earlier loan that was never written
    pub_->release(loaned_);
    loaned_ = nullptr;
  }
  loaned_ = acquire(len);
  loaned_len_ = len;
  return loaned_;
}

void Writer::write_loan(void *sample, size_t len) {
  if (loaned_ == nullptr || sample != loaned_)
    fail("write_loan got a sample that loan() did not return (or that was already written)");
  loaned_ = nullptr;
  if (len != loaned_len_) {  // an iceoryx chunk's payload size is fixed at the loan
    pub_->release(sample);
    fail("write_loan of %zu bytes for a chunk loaned for %zu; they must be equal", len, loaned_len_);
  }
  pub_->publish(sample);
}

}  // namespace psbiox
