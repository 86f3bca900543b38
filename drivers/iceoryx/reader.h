// The reading end of a topic: an iceoryx subscriber.
//
// take() returns the chunk itself (zero copy); it goes back to RouDi's mempool on
// release() or the next take(). Waiting for data:
//   poll:     take(timeout 0) tries the subscriber queue and returns at once.
//   wait:     a WaitSet with the subscriber's HAS_DATA state attached; take(timeout)
//             tries the queue, then waits on the WaitSet up to the timeout.
//   listener: an iox::popo::Listener (iceoryx's own thread) calls on_data for every
//             sample when the subscriber signals DATA_RECEIVED; destroy detaches the
//             event and joins the listener's thread.
#ifndef PSBENCH_ICEORYX_READER_H
#define PSBENCH_ICEORYX_READER_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "iceoryx_posh/popo/listener.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"

#include "context.h"

namespace psbiox {

class Reader : public Endpoint {
 public:
  // on_data non-NULL: listener mode. NULL (err set) on failure.
  static Reader *create(Context *ctx, const char *topic, psb_on_data on_data, void *user, psb_error *err);
  ~Reader() override;

  int matched_writers() const;
  int take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err);
  void release();

 private:
  Reader() = default;
  // 1: a chunk in *data and *len (held until release), 0: none, -1: error.
  int try_take(const void **data, size_t *len, psb_error *err);
  static void on_samples(iox::popo::UntypedSubscriber *sub, Reader *self);

  std::unique_ptr<iox::popo::UntypedSubscriber> sub_;
  std::unique_ptr<iox::popo::WaitSet<1>> waitset_;  // wait mode
  std::unique_ptr<iox::popo::Listener> listener_;   // listener mode
  iox::capro::ServiceDescription service_;
  std::string topic_;
  const void *held_ = nullptr;  // the chunk the last take() returned
  psb_on_data on_data_ = nullptr;
  void *user_ = nullptr;
};

}  // namespace psbiox

#endif
