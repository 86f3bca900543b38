// Writing: the node's message into the prebuilt sample, then DataWriter::write.
#include "writer.h"

#include "endpoint_qos.h"
#include "psbench/driver_support.h"

namespace psbfastdds {

using namespace eprosima::fastdds::dds;

namespace {
const eprosima::fastrtps::Duration_t kAckWaitOnDestroy(5, 0);
}  // namespace

Writer *Writer::create(Context *ctx, const char *topic, psb_error *err) {
  std::unique_ptr<Writer> w(new Writer(ctx));
  w->sample_ = make_sample(ctx->settings());
  w->topic_ = ctx->acquire_topic(topic, err);
  if (w->topic_ == nullptr) return nullptr;
  const Settings &s = ctx->settings();
  const DataWriterQos base = s.transport == Transport::config
                                 ? ctx->publisher()->get_default_datawriter_qos()
                                 : DataWriterQos();
  w->writer_ = ctx->publisher()->create_datawriter(w->topic_, writer_qos(s, base));
  if (w->writer_ == nullptr) {
    psb_set_error(err, "fastdds: cannot create a DataWriter on '%s' (Fast DDS's message is above)",
              topic);
    return nullptr;
  }
  ctx->add(w.get());
  return w.release();
}

Writer::~Writer() {
  ctx_->remove(this);
  if (writer_ != nullptr) {
    // A reliable writer deleted with samples in flight loses them (the end marker
    // too): give matched readers time to acknowledge, as a DDS application should.
    if (ctx_->settings().qos.reliability == PSB_RELIABLE)
      writer_->wait_for_acknowledgments(kAckWaitOnDestroy);
    ctx_->publisher()->delete_datawriter(writer_);
  }
  if (topic_ != nullptr) ctx_->release_topic(topic_);
}

int Writer::write(const void *data, size_t len, psb_error *err) {
  if (!sample_->load(data, len, err)) return -1;
  if (!writer_->write(sample_->data())) {
    psb_set_error(err, "fastdds: DataWriter::write failed (reliable history full for "
                   "max_blocking_time, or no memory for a %zu-byte sample)", len);
    return -1;
  }
  return 0;
}

int Writer::drain(int64_t timeout_ns, psb_error *err) {
  // Reliable: until every matched reader acknowledged every sample. Best effort
  // (StatelessWriter): until the writer has nothing left unsent, which in the
  // synchronous publish mode the driver uses is always at once (write() hands each
  // sample to the transport before it returns); it matters only when a vendor XML
  // (transport config) selects the asynchronous publish mode.
  const eprosima::fastrtps::Duration_t wait(int32_t(timeout_ns / 1'000'000'000),
                                            uint32_t(timeout_ns % 1'000'000'000));
  const ReturnCode_t rc = writer_->wait_for_acknowledgments(wait);
  if (rc == ReturnCode_t::RETCODE_OK) return 1;
  // Fast DDS 2.9 returns RETCODE_ERROR, not RETCODE_TIMEOUT, when max_wait elapses
  // (DataWriterImpl::wait_for_acknowledgments: wait_for_all_acked() false -> ERROR);
  // on an enabled writer that is its only failure.
  if (rc == ReturnCode_t::RETCODE_ERROR || rc == ReturnCode_t::RETCODE_TIMEOUT) return 0;
  psb_set_error(err, "fastdds: wait_for_acknowledgments failed (return code %d)", int(rc()));
  return -1;
}

int Writer::matched_readers() const {
  PublicationMatchedStatus status;
  if (writer_->get_publication_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
  return status.current_count;
}

}  // namespace psbfastdds
