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
#include "psbench/sdk.hpp"

namespace psbiox {

class Reader : public Endpoint {
 public:
  // A listener given: listener mode. Throws psb::sdk::Error if refused.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data);
  ~Reader() override;

  int matched() const;  // publishers offering the topic: 1 or 0
  bool take(int64_t timeout_ns, const void *&data, size_t &len);
  void release();

 private:
  // true: a chunk in data and len (held until release), false: none.
  bool try_take(const void *&data, size_t &len);
  static void on_samples(iox::popo::UntypedSubscriber *sub, Reader *self);

  std::unique_ptr<iox::popo::UntypedSubscriber> sub_;
  std::unique_ptr<iox::popo::WaitSet<1>> waitset_;  // wait mode
  std::unique_ptr<iox::popo::Listener> listener_;   // listener mode
  iox::capro::ServiceDescription service_;
  std::string topic_;
  const void *held_ = nullptr;  // the chunk the last take() returned
  psb::sdk::Listener on_data_;  // listener mode
};

}  // namespace psbiox

#endif
