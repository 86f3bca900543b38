#include "reader.h"

#include <sched.h>
#include <time.h>

#include "iceoryx_posh/mepoo/chunk_header.hpp"

#include "runtime.h"

namespace psbiox {
namespace {

using psb::sdk::fail;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

size_t payload_size(const void *payload) {
  return iox::mepoo::ChunkHeader::fromUserPayload(payload)->userPayloadSize();
}

}  // namespace

Reader::Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data) : on_data_(on_data) {
  const Settings &s = ctx.settings;
  if (bool(on_data) != (s.notify == PSB_NOTIFY_LISTENER)) fail("on_data must be given exactly in listener mode");
  is_reader = true;
  topic_ = topic;

  iox::popo::SubscriberOptions options;
  options.queueCapacity = s.queue_capacity;
  options.historyRequest = s.history;  // transient_local: what a late joiner asks for
  options.requiresPublisherHistorySupport = s.history > 0;
  // Subscribed only once the WaitSet or Listener is attached: RouDi may connect the
  // queue (and push a transient_local history into it) at once, and a push before the
  // attach would never be signalled.
  options.subscribeOnCreate = false;
  options.queueFullPolicy = s.writer_waits_for_queue ? iox::popo::QueueFullPolicy::BLOCK_PRODUCER
                                                     : iox::popo::QueueFullPolicy::DISCARD_OLDEST_DATA;
  service_ = service_for(s.run_id, topic);
  sub_.reset(new iox::popo::UntypedSubscriber(service_, options));

  if (s.notify == PSB_NOTIFY_WAIT) {
    waitset_.reset(new iox::popo::WaitSet<1>());
    auto attached = waitset_->attachState(*sub_, iox::popo::SubscriberState::HAS_DATA);
    if (attached.has_error())
      fail("attaching the subscriber of %s to a WaitSet failed (WaitSetError %d)", topic,
           static_cast<int>(attached.get_error()));
  } else if (s.notify == PSB_NOTIFY_LISTENER) {
    listener_.reset(new iox::popo::Listener());
    auto attached = listener_->attachEvent(*sub_, iox::popo::SubscriberEvent::DATA_RECEIVED,
                                           iox::popo::createNotificationCallback(on_samples, *this));
    if (attached.has_error())
      fail("attaching the subscriber of %s to a Listener failed (ListenerError %d)", topic,
           static_cast<int>(attached.get_error()));
  }
  sub_->subscribe();
  ctx.link(this);
}

Reader::~Reader() {
  if (ctx != nullptr) ctx->unlink(this);
  // The Listener first: its destructor joins its thread (a callback in progress
  // finishes first), then detaches the subscriber. detachEvent() before that could
  // race with a callback the thread is starting.
  listener_.reset();
  if (waitset_) {
    waitset_->detachState(*sub_, iox::popo::SubscriberState::HAS_DATA);
    waitset_.reset();
  }
  if (held_ != nullptr) sub_->release(held_);
  sub_.reset();  // unsubscribes; RouDi removes the port
}

int Reader::matched() const {
  // 1/0: subscribed, and a publisher offers the service (RouDi then connects them).
  if (sub_->getSubscriptionState() != iox::SubscribeState::SUBSCRIBED) return 0;
  return publishers_offering(service_);
}

void Reader::release() {
  if (held_ != nullptr) {
    sub_->release(held_);
    held_ = nullptr;
  }
}

bool Reader::try_take(const void *&data, size_t &len) {
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

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) fail("take() is not used in listener mode");
  release();
  bool r = try_take(data, len);
  if (r || timeout_ns == 0) return r;
  if (waitset_) {
    // HAS_DATA is a state: the WaitSet returns at once if data came in meanwhile. A
    // signal may end the wait early; then there is no sample (false).
    if (timeout_ns < 0)
      waitset_->wait();
    else
      waitset_->timedWait(iox::units::Duration::fromNanoseconds(static_cast<uint64_t>(timeout_ns)));
    return try_take(data, len);
  }
  // poll mode asked to wait (the node does not): spin until the deadline.
  const int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
  while (!r && now_ns() < deadline) {
    sched_yield();
    r = try_take(data, len);
  }
  return r;
}

void Reader::on_samples(iox::popo::UntypedSubscriber *sub, Reader *self) {
  // One notification may stand for several samples: take until the queue is empty.
  for (;;) {
    auto taken = sub->take();
    if (taken.has_error()) return;
    const void *payload = taken.value();
    self->on_data_(payload, payload_size(payload));
    sub->release(payload);
  }
}

}  // namespace psbiox
