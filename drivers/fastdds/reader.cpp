// Taking: DataReader::take_next_sample into the endpoint's own sample, then one copy
// into the contiguous message the node reads. Wait mode blocks in
// DataReader::wait_for_unread_message; listener mode uses on_data_available.
#include "reader.h"

#include <chrono>
#include <cstdio>
#include <thread>

#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>

#include "endpoint_qos.h"
#include "psbench/driver_support.h"

namespace psbfastdds {

using namespace eprosima::fastdds::dds;
using eprosima::fastrtps::Duration_t;

class Reader::Listener final : public DataReaderListener {
 public:
  explicit Listener(Reader *r) : reader_(r) {}
  void on_data_available(DataReader *) override { reader_->on_data_available(); }

 private:
  Reader *reader_;
};

Reader::Reader(Context *ctx) : ctx_(ctx) {}

Reader *Reader::create(Context *ctx, const char *topic, psb_on_data on_data, void *user,
                       psb_error *err) {
  const Settings &s = ctx->settings();
  if ((on_data != nullptr) != (s.notify == PSB_NOTIFY_LISTENER)) {
    psb_set_error(err, "fastdds: a listener callback is given exactly with notify listener");
    return nullptr;
  }
  std::unique_ptr<Reader> r(new Reader(ctx));
  r->sample_ = make_sample(s);
  r->capacity_ = s.max_payload;
  r->buffer_.reset(new uint8_t[r->capacity_]);
  r->on_data_ = on_data;
  r->user_ = user;
  r->topic_ = ctx->acquire_topic(topic, err);
  if (r->topic_ == nullptr) return nullptr;
  const DataReaderQos base = s.transport == Transport::config
                                 ? ctx->subscriber()->get_default_datareader_qos()
                                 : DataReaderQos();
  if (on_data != nullptr) r->listener_ = std::make_unique<Listener>(r.get());
  r->reader_ = ctx->subscriber()->create_datareader(
      r->topic_, reader_qos(s, base), r->listener_.get(),
      on_data != nullptr ? StatusMask::data_available() : StatusMask::none());
  if (r->reader_ == nullptr) {
    psb_set_error(err, "fastdds: cannot create a DataReader on '%s' (Fast DDS's message is above)",
              topic);
    return nullptr;
  }
  ctx->add(r.get());
  return r.release();
}

Reader::~Reader() {
  ctx_->remove(this);
  if (reader_ != nullptr) {
    // Stop callbacks before the reader and the node's callback target go away.
    stopping_.store(true);
    reader_->set_listener(nullptr, StatusMask::none());
    while (in_callback_.load() != 0) std::this_thread::yield();
    ctx_->subscriber()->delete_datareader(reader_);
  }
  if (topic_ != nullptr) ctx_->release_topic(topic_);
}

int Reader::take_one(psb_error *err) {
  for (;;) {
    const ReturnCode_t rc = reader_->take_next_sample(sample_->data(), &info_);
    if (rc == ReturnCode_t::RETCODE_NO_DATA) return 0;
    if (rc != ReturnCode_t::RETCODE_OK) {
      psb_set_error(err, "fastdds: DataReader::take_next_sample failed with return code %d",
                static_cast<int>(rc()));
      return -1;
    }
    if (!info_.valid_data) continue;  // an instance state change, no data
    len_ = sample_->store(buffer_.get(), capacity_, err);
    return len_ > 0 ? 1 : kRejected;
  }
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::nanoseconds(timeout_ns);
  for (;;) {
    const int r = take_one(err);
    if (r != 0) {
      if (r == 1) {
        *data = buffer_.get();
        *len = len_;
      }
      return r == kRejected ? -1 : r;
    }
    if (timeout_ns == 0) return 0;
    int64_t wait_ns = 1'000'000'000;  // a negative timeout: wait in 1 s steps
    if (timeout_ns > 0) {
      wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - clock::now())
                    .count();
      if (wait_ns <= 0) return 0;
    }
    const Duration_t wait(static_cast<int32_t>(wait_ns / 1'000'000'000),
                          static_cast<uint32_t>(wait_ns % 1'000'000'000));
    if (!reader_->wait_for_unread_message(wait) && timeout_ns > 0) return 0;
  }
}

void Reader::on_data_available() {
  in_callback_.fetch_add(1);
  if (!stopping_.load()) {
    psb_error err{};
    for (int r; (r = take_one(&err)) != 0;) {
      if (r == 1) {
        on_data_(user_, buffer_.get(), len_);
        continue;
      }
      std::fprintf(stderr, "%s\n", err.message);  // the node counts the sample lost
      if (r != kRejected) break;                   // take itself failed: stop for now
    }
  }
  in_callback_.fetch_sub(1);
}

void Reader::counters(psb_put_counter put, void *user) const {
  eprosima::fastdds::dds::SampleLostStatus lost;
  if (reader_->get_sample_lost_status(lost) == ReturnCode_t::RETCODE_OK)
    put(user, "sample_lost", uint64_t(lost.total_count));
  eprosima::fastdds::dds::SampleRejectedStatus rejected;
  if (reader_->get_sample_rejected_status(rejected) == ReturnCode_t::RETCODE_OK)
    put(user, "sample_rejected", uint64_t(rejected.total_count));
}

int Reader::matched_writers() const {
  SubscriptionMatchedStatus status;
  if (reader_->get_subscription_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
  return status.current_count;
}

}  // namespace psbfastdds
