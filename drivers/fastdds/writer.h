// A DataWriter on one topic with the sample it writes from. Writing: the node's message
// into the prebuilt sample, then DataWriter::write.
#ifndef PSBENCH_FASTDDS_WRITER_H
#define PSBENCH_FASTDDS_WRITER_H

#include <fastdds/dds/publisher/DataWriter.hpp>
#include <memory>

#include "context.h"
#include "endpoint_qos.h"
#include "psbench/sdk.hpp"
#include "samples.h"

namespace psbfastdds {

class Writer {
 public:
  // Throws psb::sdk::Error if the writer cannot be made.
  Writer(Context &ctx, const char *topic) : ctx_(ctx) {
    using fdds::DataWriterQos;
    build_or_tear_down(
        "create_writer",
        [&] {
          sample_ = make_sample(ctx.settings());
          topic_ = ctx.acquire_topic(topic);
          const Settings &s = ctx.settings();
          const DataWriterQos base = s.transport == Transport::config
                                         ? ctx.publisher()->get_default_datawriter_qos()
                                         : DataWriterQos();
          writer_ = ctx.publisher()->create_datawriter(topic_, writer_qos(s, base));
          if (writer_ == nullptr)
            psb::sdk::fail("cannot create a DataWriter on '%s' (Fast DDS's message is above)",
                           topic);
        },
        [&] { tear_down(); });
  }
  ~Writer() { tear_down(); }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  void write(const void *data, size_t len) {
    sample_->load(data, len);
    if (!writer_->write(sample_->data()))
      psb::sdk::fail(
          "DataWriter::write failed (reliable history full for max_blocking_time, or no memory "
          "for a %zu-byte sample)",
          len);
  }

  int matched() const {  // matched readers
    fdds::PublicationMatchedStatus status;
    if (writer_->get_publication_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
    return status.current_count;
  }

  // ABI drain: DataWriter::wait_for_acknowledgments: true once every matched reliable
  // reader acknowledged all samples (best effort: once nothing is left unsent), false at
  // the timeout; throws on an error. Best effort (StatelessWriter): in the synchronous
  // publish mode the driver uses that is always at once (write() hands each sample to the
  // transport before it returns); it matters only when a vendor XML (transport config)
  // selects the asynchronous publish mode.
  bool drain(int64_t timeout_ns) {
    const eprosima::fastrtps::Duration_t wait(int32_t(timeout_ns / 1'000'000'000),
                                              uint32_t(timeout_ns % 1'000'000'000));
    const ReturnCode_t rc = writer_->wait_for_acknowledgments(wait);
    if (rc == ReturnCode_t::RETCODE_OK) return true;
    // Fast DDS 2.9 returns RETCODE_ERROR, not RETCODE_TIMEOUT, when max_wait elapses
    // (DataWriterImpl::wait_for_acknowledgments: wait_for_all_acked() false -> ERROR);
    // on an enabled writer that is its only failure.
    if (rc == ReturnCode_t::RETCODE_ERROR || rc == ReturnCode_t::RETCODE_TIMEOUT) return false;
    psb::sdk::fail("wait_for_acknowledgments failed (return code %d)", int(rc()));
  }

 private:
  void tear_down() noexcept {
    if (writer_ != nullptr) {
      // A reliable writer deleted with samples in flight loses them (the end marker
      // too): give matched readers time to acknowledge, as a DDS application should.
      if (ctx_.settings().qos.reliability == PSB_RELIABLE)
        writer_->wait_for_acknowledgments(eprosima::fastrtps::Duration_t(5, 0));  // 5 s
      ctx_.publisher()->delete_datawriter(writer_);
      writer_ = nullptr;
    }
    if (topic_ != nullptr) ctx_.release_topic(topic_);
    topic_ = nullptr;
  }

  Context &ctx_;
  fdds::Topic *topic_ = nullptr;
  fdds::DataWriter *writer_ = nullptr;
  std::unique_ptr<Sample> sample_;
};

}  // namespace psbfastdds

#endif
