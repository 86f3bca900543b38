// A DataReader on one topic, the sample it deserializes into and the contiguous buffer it
// hands the node. Taking: DataReader::take_next_sample into the endpoint's own sample,
// then one copy into the contiguous message the node reads. Wait mode blocks in
// DataReader::wait_for_unread_message; in listener mode the reader is its own
// DataReaderListener, whose on_data_available calls the node back from Fast DDS's receive
// thread.
#ifndef PSBENCH_FASTDDS_READER_H
#define PSBENCH_FASTDDS_READER_H

#include <atomic>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <memory>
#include <thread>

#include "context.h"
#include "endpoint_qos.h"
#include "psbench/sdk.hpp"
#include "psbench/sdk_dds_status.hpp"
#include "samples.h"

namespace psbfastdds {

class Reader : fdds::DataReaderListener {
 public:
  // Throws psb::sdk::Error if the reader cannot be made.
  Reader(Context &ctx, const char *topic, psb::sdk::Listener on_data)
      : ctx_(ctx), on_data_(on_data) {
    using namespace eprosima::fastdds::dds;
    const Settings &s = ctx.settings();
    if (bool(on_data) != (s.notify == PSB_NOTIFY_LISTENER))
      psb::sdk::fail("a listener callback is given exactly with notify listener");
    build_or_tear_down(
        "create_reader",
        [&] {
          sample_ = make_sample(s);
          capacity_ = s.max_payload;
          buffer_.reset(new uint8_t[capacity_]);
          topic_ = ctx.acquire_topic(topic);
          const DataReaderQos base = s.transport == Transport::config
                                         ? ctx.subscriber()->get_default_datareader_qos()
                                         : DataReaderQos();
          reader_ = ctx.subscriber()->create_datareader(
              topic_, reader_qos(s, base), on_data ? this : nullptr,
              on_data ? StatusMask::data_available() : StatusMask::none());
          if (reader_ == nullptr)
            psb::sdk::fail("cannot create a DataReader on '%s' (Fast DDS's message is above)",
                           topic);
        },
        [&] { tear_down(); });
  }
  ~Reader() override { tear_down(); }
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  // The SDK's take() tries, then waits (psb::sdk::take_waiting). try_take: true = a
  // message in data/len, false = none now; throws on an error (BadSample: not of this run).
  bool try_take(const void *&data, size_t &len) {
    for (;;) {
      const ReturnCode_t rc = reader_->take_next_sample(sample_->data(), &info_);
      if (rc == ReturnCode_t::RETCODE_NO_DATA) return false;
      if (rc != ReturnCode_t::RETCODE_OK)
        psb::sdk::fail("DataReader::take_next_sample failed with return code %d", int(rc()));
      if (!info_.valid_data) continue;  // an instance state change, no data
      data = buffer_.get();
      len = sample_->store(buffer_.get(), capacity_);  // BadSample: not one of this run's
      return true;
    }
  }

  // Until an unread message may be there.
  bool wait(int64_t timeout_ns) {
    const int64_t ns = timeout_ns < 0 ? 1'000'000'000 : timeout_ns;  // no limit: 1 s steps
    return reader_->wait_for_unread_message(eprosima::fastrtps::Duration_t(
        static_cast<int32_t>(ns / 1'000'000'000), static_cast<uint32_t>(ns % 1'000'000'000)));
  }

  int matched() const {  // matched writers
    fdds::SubscriptionMatchedStatus status;
    if (reader_->get_subscription_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
    return status.current_count;
  }

  // ABI counters: the reader's SAMPLE_LOST and SAMPLE_REJECTED statuses (total counts).
  void counters(psb::sdk::CounterSink put) const {
    psb::sdk::dds::put_sample_statuses<fdds::SampleLostStatus, fdds::SampleRejectedStatus>(
        put, *reader_);
  }

 private:
  void tear_down() noexcept {
    if (reader_ != nullptr) {
      // Stop callbacks before the reader and the node's callback target go away.
      stopping_.store(true);
      reader_->set_listener(nullptr, fdds::StatusMask::none());
      while (in_callback_.load() != 0) std::this_thread::yield();
      ctx_.subscriber()->delete_datareader(reader_);
      reader_ = nullptr;
    }
    if (topic_ != nullptr) ctx_.release_topic(topic_);
    topic_ = nullptr;
  }

  // Listener mode, on Fast DDS's receive thread.
  void on_data_available(fdds::DataReader *) override {
    in_callback_.fetch_add(1);
    if (!stopping_.load())  // the SDK hands over all there is, counting errors
      on_data_.drain([this](const void *&data, size_t &len) { return try_take(data, len); });
    in_callback_.fetch_sub(1);
  }

  Context &ctx_;
  fdds::Topic *topic_ = nullptr;
  fdds::DataReader *reader_ = nullptr;
  std::unique_ptr<Sample> sample_;
  fdds::SampleInfo info_;
  std::unique_ptr<uint8_t[]> buffer_;
  size_t capacity_ = 0;

  const psb::sdk::Listener on_data_;
  // destroy waits for a callback in progress; a later one returns at once.
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_callback_{0};
};

}  // namespace psbfastdds

#endif
