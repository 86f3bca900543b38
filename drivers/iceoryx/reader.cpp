#include "reader.h"

#include <sched.h>
#include <time.h>

#include "iceoryx_posh/mepoo/chunk_header.hpp"

#include "psbench/driver_support.h"
#include "runtime.h"

namespace psbiox {
namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

size_t payload_size(const void *payload) {
  return iox::mepoo::ChunkHeader::fromUserPayload(payload)->userPayloadSize();
}

}  // namespace

Reader *Reader::create(Context *ctx, const char *topic, psb_on_data on_data, void *user, psb_error *err) {
  const Settings &s = ctx->settings;
  if ((on_data != nullptr) != (s.notify == PSB_NOTIFY_LISTENER)) {
    psb_set_error(err, "iceoryx: on_data must be given exactly in listener mode");
    return nullptr;
  }
  std::unique_ptr<Reader> r(new Reader());
  r->is_reader = true;
  r->topic_ = topic;
  r->on_data_ = on_data;
  r->user_ = user;

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
  r->service_ = service_for(s.run_id, topic);
  r->sub_.reset(new iox::popo::UntypedSubscriber(r->service_, options));

  if (s.notify == PSB_NOTIFY_WAIT) {
    r->waitset_.reset(new iox::popo::WaitSet<1>());
    auto attached = r->waitset_->attachState(*r->sub_, iox::popo::SubscriberState::HAS_DATA);
    if (attached.has_error()) {
      psb_set_error(err, "iceoryx: attaching the subscriber of %s to a WaitSet failed (WaitSetError %d)", topic,
                static_cast<int>(attached.get_error()));
      return nullptr;
    }
  } else if (s.notify == PSB_NOTIFY_LISTENER) {
    r->listener_.reset(new iox::popo::Listener());
    auto attached = r->listener_->attachEvent(*r->sub_, iox::popo::SubscriberEvent::DATA_RECEIVED,
                                              iox::popo::createNotificationCallback(on_samples, *r));
    if (attached.has_error()) {
      psb_set_error(err, "iceoryx: attaching the subscriber of %s to a Listener failed (ListenerError %d)", topic,
                static_cast<int>(attached.get_error()));
      return nullptr;
    }
  }
  r->sub_->subscribe();
  ctx->link(r.get());
  return r.release();
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

int Reader::matched_writers() const {
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

int Reader::try_take(const void **data, size_t *len, psb_error *err) {
  auto taken = sub_->take();
  if (!taken.has_error()) {
    held_ = taken.value();
    *data = held_;
    *len = payload_size(held_);
    return 1;
  }
  if (taken.get_error() == iox::popo::ChunkReceiveResult::NO_CHUNK_AVAILABLE) return 0;
  psb_set_error(err, "iceoryx: the subscriber of %s holds too many chunks at once", topic_.c_str());
  return -1;
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  if (on_data_ != nullptr) {
    psb_set_error(err, "iceoryx: take() is not used in listener mode");
    return -1;
  }
  release();
  int r = try_take(data, len, err);
  if (r != 0 || timeout_ns == 0) return r;
  if (waitset_) {
    // HAS_DATA is a state: the WaitSet returns at once if data came in meanwhile. A
    // signal may end the wait early; then there is no sample (0).
    if (timeout_ns < 0)
      waitset_->wait();
    else
      waitset_->timedWait(iox::units::Duration::fromNanoseconds(static_cast<uint64_t>(timeout_ns)));
    return try_take(data, len, err);
  }
  // poll mode asked to wait (the node does not): spin until the deadline.
  const int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
  while (r == 0 && now_ns() < deadline) {
    sched_yield();
    r = try_take(data, len, err);
  }
  return r;
}

void Reader::on_samples(iox::popo::UntypedSubscriber *sub, Reader *self) {
  // One notification may stand for several samples: take until the queue is empty.
  for (;;) {
    auto taken = sub->take();
    if (taken.has_error()) return;
    const void *payload = taken.value();
    self->on_data_(self->user_, payload, payload_size(payload));
    sub->release(payload);
  }
}

}  // namespace psbiox
