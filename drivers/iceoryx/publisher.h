// An iceoryx UntypedPublisher that can also tell how many subscriber queues it
// delivers to, and how full RouDi's mempools are.
//
// iceoryx 2.0 offers only hasSubscribers() (a bool) and no way to ask about mempools
// before loaning, and a loan larger than every mempool's chunks aborts the process
// (MEPOO__MEMPOOL_GETCHUNK_CHUNK_IS_TOO_LARGE is a SEVERE error, an assert in Debian's
// build). The publisher port's data in shared memory holds both answers: the chunk
// distributor's queue list (read under its own lock, as iceoryx does) and the memory
// manager the port allocates from. Reaching it needs BasePort::getMembers(), which is
// protected; the explicit instantiation below takes its address where access rules
// do not apply ([temp.spec]/6), a standard-conforming way that depends only on the
// 2.0 headers this driver is built against.
#ifndef PSBENCH_ICEORYX_PUBLISHER_H
#define PSBENCH_ICEORYX_PUBLISHER_H

#include <cstdint>

#include "iceoryx_posh/internal/mepoo/memory_manager.hpp"
#include "iceoryx_posh/internal/popo/ports/publisher_port_data.hpp"
#include "iceoryx_posh/internal/popo/ports/publisher_port_user.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"

namespace psbiox {

namespace detail {
template <typename Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type get(Tag) { return Member; }
};
struct BasePortMembers {
  using type = iox::popo::BasePortData *(iox::popo::BasePort::*)() noexcept;
  friend type get(BasePortMembers);
};
template struct Expose<BasePortMembers, &iox::popo::BasePort::getMembers>;
}  // namespace detail

class Publisher : public iox::popo::UntypedPublisher {
 public:
  using UntypedPublisher::UntypedPublisher;

  // Subscriber queues connected to this publisher (RouDi adds one per subscriber).
  int subscriber_queues() {
    auto &data = port_data()->m_chunkSenderData;
    typename std::remove_reference_t<decltype(data)>::LockGuard_t lock(data);
    return static_cast<int>(data.m_queues.size());
  }

  iox::mepoo::MemoryManager &memory() { return *port_data()->m_chunkSenderData.m_memoryMgr.get(); }

 private:
  iox::popo::PublisherPortData *port_data() {
    iox::popo::BasePort &base = port();
    return static_cast<iox::popo::PublisherPortData *>((base.*get(detail::BasePortMembers{}))());
  }
};

}  // namespace psbiox

#endif
