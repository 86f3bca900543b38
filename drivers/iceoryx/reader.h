// The reading end of a topic: an iceoryx subscriber. take() returns the chunk itself
// (zero copy); it goes back to RouDi's mempool on release() or the next take(). How
// each notify mode waits (poll, a WaitSet, an iox::popo::Listener): README, "Notify modes".
#ifndef PSBENCH_ICEORYX_READER_H
#define PSBENCH_ICEORYX_READER_H

#include <cstdint>
#include <memory>
#include <string>

#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/listener.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "psbench/sdk.hpp"
#include "runtime.h"

namespace psbiox {

class Reader {
 public:
  // A listener given: listener mode. Throws psb::sdk::Error if refused.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
      : service_(service_for(ctx.settings.run_id, topic)), topic_(topic), on_data_(on_data) {
    const Settings &s = ctx.settings;
    if (bool(on_data) != (s.notify == PSB_NOTIFY_LISTENER))
      fail("on_data must be given exactly in listener mode");
    iox::popo::SubscriberOptions options;
    options.queueCapacity = s.queue_capacity;
    options.historyRequest = s.history;  // transient_local: what a late joiner asks for
    options.requiresPublisherHistorySupport = s.history > 0;
    // Subscribed only once the WaitSet or Listener is attached: RouDi may connect the
    // queue (and push a transient_local history into it) at once, and a push before the
    // attach would never be signalled.
    options.subscribeOnCreate = false;
    options.queueFullPolicy = s.writer_waits_for_queue
                                  ? iox::popo::QueueFullPolicy::BLOCK_PRODUCER
                                  : iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
    sub_ = std::make_unique<iox::popo::UntypedSubscriber>(service_, options);

    if (s.notify == PSB_NOTIFY_WAIT) {
      waitset_ = std::make_unique<iox::popo::WaitSet<1>>();
      auto attached = waitset_->attachState(*sub_, iox::popo::SubscriberState::HAS_DATA);
      if (attached.has_error())
        fail("attaching the subscriber of %s to a WaitSet failed (WaitSetError %d)", topic,
             static_cast<int>(attached.get_error()));
    } else if (s.notify == PSB_NOTIFY_LISTENER) {
      listener_ = std::make_unique<iox::popo::Listener>();
      auto attached =
          listener_->attachEvent(*sub_, iox::popo::SubscriberEvent::DATA_RECEIVED,
                                 iox::popo::createNotificationCallback(on_samples, *this));
      if (attached.has_error())
        fail("attaching the subscriber of %s to a Listener failed (ListenerError %d)", topic,
             static_cast<int>(attached.get_error()));
    }
    sub_->subscribe();
  }

  ~Reader() {
    // The Listener first: its destructor joins its thread (a callback in progress
    // finishes first), then detaches the subscriber. detachEvent() before that could
    // race with a callback the thread is starting.
    listener_.reset();
    if (waitset_) {
      waitset_->detachState(*sub_, iox::popo::SubscriberState::HAS_DATA);
      waitset_.reset();
    }
    release();
    sub_.reset();  // unsubscribes; RouDi removes the port
  }

  // 1/0: subscribed, and a publisher offers the service (RouDi then connects them).
  int matched() const {
    if (sub_->getSubscriptionState() != iox::SubscribeState::SUBSCRIBED) return 0;
    return publishers_offering(service_);
  }

  // The SDK's take() tries, then waits (psb::sdk::take_waiting).
  bool wait(int64_t timeout_ns) {
    if (!waitset_) {  // poll mode (the node never waits then): tried again soon
      sched_yield();
      return true;
    }
    // HAS_DATA is a state: the WaitSet returns at once if data came in meanwhile.
    if (timeout_ns < 0)
      waitset_->wait();
    else
      waitset_->timedWait(iox::units::Duration::fromNanoseconds(static_cast<uint64_t>(timeout_ns)));
    return true;
  }

  bool try_take(const void *&data, size_t &len) {
    if (on_data_) fail("take() is not used in listener mode");
    return next(data, len);
  }

  // true: a chunk in data and len (held until release or the next one), false: none.
  bool next(const void *&data, size_t &len) {
    release();
    auto taken = sub_->take();
    if (!taken.has_error()) {
      held_ = taken.value();
      data = held_;
      len = payload_size(held_);
      return true;
    }
    if (taken.get_error() == iox::popo::ChunkReceiveResult::NO_CHUNK_AVAILABLE) return false;
    fail("the subscriber of %s holds too many chunks at once", topic_.c_str());
  }

  void release() {
    if (held_ != nullptr) {
      sub_->release(held_);
      held_ = nullptr;
    }
  }

 private:
  static size_t payload_size(const void *payload) {
    return iox::mepoo::ChunkHeader::fromUserPayload(payload)->userPayloadSize();
  }

  // Listener mode: one notification may stand for several samples; the SDK hands over all
  // there is, counting errors.
  static void on_samples(iox::popo::UntypedSubscriber *, Reader *self) {
    self->on_data_.drain([self](const void *&data, size_t &len) { return self->next(data, len); });
    self->release();
  }

  std::unique_ptr<iox::popo::UntypedSubscriber> sub_;
  std::unique_ptr<iox::popo::WaitSet<1>> waitset_;  // wait mode
  std::unique_ptr<iox::popo::Listener> listener_;   // listener mode
  const iox::capro::ServiceDescription service_;
  const std::string topic_;
  const void *held_ = nullptr;        // the chunk the last take() returned
  const psb::sdk::Listener on_data_;  // listener mode
};

}  // namespace psbiox

#endif
