// The writing end of a topic: an iceoryx publisher. write() copies the message into a
// chunk loaned from RouDi's mempools and publishes it; loan()/write_loan() hand out the
// chunk itself (README, "Copies on the data path").
#ifndef PSBENCH_ICEORYX_WRITER_H
#define PSBENCH_ICEORYX_WRITER_H

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "iceoryx_posh/mepoo/chunk_settings.hpp"
#include "publisher.h"
#include "runtime.h"

namespace psbiox {

class Writer {
 public:
  // Throws psb::sdk::Error if refused.
  Writer(Context &ctx, const char *topic)
      : topic_(topic),
        reliable_(ctx.settings.reliable),
        queue_capacity_(ctx.settings.queue_capacity),
        max_payload_(ctx.settings.max_payload) {
    const Settings &s = ctx.settings;
    iox::popo::PublisherOptions options;
    options.historyCapacity = s.history;  // transient_local: kept for late joiners
    options.offerOnCreate = true;
    options.subscriberTooSlowPolicy = s.writer_waits_for_queue
                                          ? iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER
                                          : iox::popo::ConsumerTooSlowPolicy::DISCARD_OLDEST_DATA;
    pub_ = std::make_unique<Publisher>(service_for(s.run_id, topic), options);

    // A loan larger than every mempool's chunks would abort the process: find the
    // mempool for the largest message now, and refuse if there is none (pool_for() gives
    // the largest then: RouDi orders its mempools by increasing chunk size).
    const auto info = pub_->memory().getMemPoolInfo(pool_for(max_payload_));
    const uint64_t need = required_chunk_size(max_payload_), overhead = need - max_payload_;
    if (info.m_chunkSize < need)
      fail(
          "no RouDi mempool holds %llu-byte chunks (the largest holds %llu-byte payloads, "
          "%u mempools in all); psbench sizes RouDi for the experiment's largest message, a "
          "RouDi started by someone else may not",
          static_cast<unsigned long long>(max_payload_),
          static_cast<unsigned long long>(info.m_chunkSize > overhead ? info.m_chunkSize - overhead
                                                                      : 0),
          pub_->memory().getNumberOfMemPools());
  }
  ~Writer() {
    if (loaned_ != nullptr) pub_->release(loaned_);
    pub_.reset();  // RouDi removes the port
  }

  int matched() { return pub_->subscriber_queues(); }

  void write(const void *data, size_t len) {
    void *chunk = acquire(len, "message");
    std::memcpy(chunk, data, len);
    pub_->publish(chunk);
  }

  void *loan(size_t len) {
    if (loaned_ != nullptr) {  // an earlier loan that was never written
      pub_->release(loaned_);
      loaned_ = nullptr;
    }
    loaned_ = acquire(len, "loan");
    loaned_len_ = len;
    return loaned_;
  }

  // sample is what loan() returned (the SDK checks).
  void write_loan(void *sample, size_t len) {
    loaned_ = nullptr;
    if (len != loaned_len_) {  // an iceoryx chunk's payload size is fixed at the loan
      pub_->release(sample);
      fail("write_loan of %zu bytes for a chunk loaned for %zu; they must be equal", len,
           loaned_len_);
    }
    pub_->publish(sample);
  }

 private:
  // The chunk size iceoryx needs for len bytes of payload (its header included).
  static uint64_t required_chunk_size(uint64_t len) {
    auto settings = iox::mepoo::ChunkSettings::create(static_cast<uint32_t>(len));
    return settings.has_error() ? UINT64_MAX : settings.value().requiredChunkSize();
  }

  // Index of the mempool iceoryx takes len-byte chunks from, or the largest if none
  // holds them (cached for the last len).
  uint32_t pool_for(size_t len) {
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

  bool pool_exhausted(uint32_t pool) {
    const auto info = pub_->memory().getMemPoolInfo(pool);
    return info.m_usedChunks >= info.m_numChunks;
  }

  [[noreturn, gnu::cold]] void exhausted(uint32_t pool, size_t len) {
    const auto info = pub_->memory().getMemPoolInfo(pool);
    fail(
        "RouDi's mempool of %u-byte chunks (for %zu-byte messages) is exhausted: all %u "
        "chunks are in use (each subscriber queue may hold %u samples, the history depth); give "
        "RouDi more chunks of this size, or lower the history depth",
        info.m_chunkSize, len, info.m_numChunks, queue_capacity_);
  }

  // Reliable: waits for a free chunk, up to kChunkWaitNs. Readers give chunks back as
  // they take: spin briefly, then yield, then sleep (psb::sdk::wait_until).
  void wait_for_chunk(uint32_t pool, size_t len) {
    if (psb::sdk::wait_until(kChunkWaitNs, [&] { return !pool_exhausted(pool); })) return;
    const auto info = pub_->memory().getMemPoolInfo(pool);
    fail(
        "reliable write of %zu bytes waited %lld s for a free chunk in RouDi's mempool of "
        "%u-byte chunks (all %u in use); is the reader still taking? Otherwise give RouDi more "
        "chunks of this size",
        len, static_cast<long long>(kChunkWaitNs / 1'000'000'000), info.m_chunkSize,
        info.m_numChunks);
  }

  // A chunk for len bytes (what: "message" or "loan"). Waits for a free chunk when
  // reliable; throws if there is none.
  void *acquire(size_t len, const char *what) {
    if (len > max_payload_)
      fail("%s of %zu bytes exceeds max_payload %llu", what, len,
           static_cast<unsigned long long>(max_payload_));
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
          fail("loaning a %zu-byte chunk on %s failed (iceoryx AllocationError %d)", len,
               topic_.c_str(), static_cast<int>(loaned.get_error()));
      }
    }
  }

  std::unique_ptr<Publisher> pub_;
  const std::string topic_;
  const bool reliable_;
  const uint32_t queue_capacity_;
  const uint64_t max_payload_;
  size_t cached_len_ = SIZE_MAX;
  uint32_t cached_pool_ = 0;
  void *loaned_ = nullptr;  // the chunk loan() handed out, until write_loan
  size_t loaned_len_ = 0;
};

}  // namespace psbiox

#endif
