// Writing: the node's message into the prebuilt sample, then DataWriter::write.
#include "writer.h"

#include "endpoint_qos.h"
#include "psbench/sdk.hpp"

namespace psbfastdds {

using namespace eprosima::fastdds::dds;
using psb::sdk::fail;

namespace {
const eprosima::fastrtps::Duration_t kAckWaitOnDestroy(5, 0);
}  // namespace

Writer::Writer(Context &ctx, const char *topic) : ctx_(ctx) {
  try {
    sample_ = make_sample(ctx.settings());
    topic_ = ctx.acquire_topic(topic);
    const Settings &s = ctx.settings();
    const DataWriterQos base = s.transport == Transport::config
                                   ? ctx.publisher()->get_default_datawriter_qos()
                                   : DataWriterQos();
    writer_ = ctx.publisher()->create_datawriter(topic_, writer_qos(s, base));
    if (writer_ == nullptr)
      fail("cannot create a DataWriter on '%s' (Fast DDS's message is above)", topic);
  } catch (const psb::sdk::Error &) {
    tear_down();
    throw;
  } catch (const std::exception &e) {
    tear_down();
    fail("create_writer failed: %s", e.what());  // as before the SDK
  }
}

Writer::~Writer() { tear_down(); }

void Writer::tear_down() noexcept {
  if (writer_ != nullptr) {
    // A reliable writer deleted with samples in flight loses them (the end marker
    // too): give matched readers time to acknowledge, as a DDS application should.
    if (ctx_.settings().qos.reliability == PSB_RELIABLE)
      writer_->wait_for_acknowledgments(kAckWaitOnDestroy);
    ctx_.publisher()->delete_datawriter(writer_);
    writer_ = nullptr;
  }
  if (topic_ != nullptr) ctx_.release_topic(topic_);
  topic_ = nullptr;
}

void Writer::write(const void *data, size_t len) {
  sample_->load(data, len);
  if (!writer_->write(sample_->data()))
    fail(
        "DataWriter::write failed (reliable history full for "
        "max_blocking_time, or no memory for a %zu-byte sample)",
        len);
}

bool Writer::drain(int64_t timeout_ns) {
  // Reliable: until every matched reader acknowledged every sample. Best effort
  // (StatelessWriter): until the writer has nothing left unsent, which in the
  // synchronous publish mode the driver uses is always at once (write() hands each
  // sample to the transport before it returns); it matters only when a vendor XML
  // (transport config) selects the asynchronous publish mode.
  const eprosima::fastrtps::Duration_t wait(int32_t(timeout_ns / 1'000'000'000),
                                            uint32_t(timeout_ns % 1'000'000'000));
  const ReturnCode_t rc = writer_->wait_for_acknowledgments(wait);
  if (rc == ReturnCode_t::RETCODE_OK) return true;
  // Fast DDS 2.9 returns RETCODE_ERROR, not RETCODE_TIMEOUT, when max_wait elapses
  // (DataWriterImpl::wait_for_acknowledgments: wait_for_all_acked() false -> ERROR);
  // on an enabled writer that is its only failure.
  if (rc == ReturnCode_t::RETCODE_ERROR || rc == ReturnCode_t::RETCODE_TIMEOUT) return false;
  fail("wait_for_acknowledgments failed (return code %d)", int(rc()));
}

int Writer::matched() const {
  PublicationMatchedStatus status;
  if (writer_->get_publication_matched_status(status) != ReturnCode_t::RETCODE_OK) return -1;
  return status.current_count;
}

}  // namespace psbfastdds
