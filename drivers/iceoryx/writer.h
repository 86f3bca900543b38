// The writing end of a topic: an iceoryx publisher.
//
// write() loans a chunk of exactly len bytes from RouDi's mempools, copies the
// message into it and publishes it (one copy); loan()/write_loan() hand out the chunk
// itself and publish it (no copy). Subscribers get the chunk itself.
#ifndef PSBENCH_ICEORYX_WRITER_H
#define PSBENCH_ICEORYX_WRITER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "context.h"
#include "publisher.h"

namespace psbiox {

class Writer : public Endpoint {
 public:
  // Throws psb::sdk::Error if refused.
  Writer(Context &ctx, const char *topic);
  ~Writer() override;

  int matched();  // subscriber queues connected
  void write(const void *data, size_t len);
  void *loan(size_t len);
  void write_loan(void *sample, size_t len);

 private:
  // A chunk for len bytes. Waits for a free chunk when reliable; throws if there is none.
  void *acquire(size_t len);
  // Index of the mempool iceoryx takes len-byte chunks from (cached for the last len).
  uint32_t pool_for(size_t len);
  bool pool_exhausted(uint32_t pool);
  void wait_for_chunk(uint32_t pool, size_t len);
  [[noreturn, gnu::cold]] void exhausted(uint32_t pool, size_t len);

  std::unique_ptr<Publisher> pub_;
  std::string topic_;
  bool reliable_ = false;
  uint32_t queue_capacity_ = 0;
  uint64_t max_payload_ = 0;
  size_t cached_len_ = SIZE_MAX;
  uint32_t cached_pool_ = 0;
  void *loaned_ = nullptr;  // the chunk loan() handed out, until write_loan
  size_t loaned_len_ = 0;
};

}  // namespace psbiox

#endif
