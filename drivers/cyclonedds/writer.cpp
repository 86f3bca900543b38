#include "writer.h"

#include <new>

#include "error.h"
#include "qos.h"

namespace psbcyc {

Writer *Writer::create(Context *ctx, const char *topic, psb_error *err) {
  Writer *w = new (std::nothrow) Writer();
  if (w == nullptr) {
    psb_set_error(err, "cyclonedds: out of memory for a writer");
    return nullptr;
  }
  w->ctx_ = ctx;
  w->complex_ = ctx->settings.type == DataType::complex;
  if (w->complex_ && !build_complex(&w->complex_sample_, ctx->settings.elements)) {
    psb_set_error(err, "cyclonedds: out of memory for a complex sample of %u elements", ctx->settings.elements);
    delete w;
    return nullptr;
  }
  w->topic_ = create_topic(*ctx, topic, err);
  if (w->topic_ < 0) {
    w->topic_ = 0;
    delete w;
    return nullptr;
  }
  w->writer_ = dds_create_writer(ctx->participant, w->topic_, ctx->qos, nullptr);
  if (w->writer_ < 0) {
    set_dds_error(err, "cannot create a writer", w->writer_);
    w->writer_ = 0;
    delete w;
    return nullptr;
  }
  if (!endpoint_on_shm(*ctx, w->writer_, "writer", err)) {
    delete w;
    return nullptr;
  }
  return w;
}

Writer::~Writer() {
  if (writer_ > 0) dds_delete(writer_);
  if (topic_ > 0) dds_delete(topic_);
  if (complex_) free_complex(&complex_sample_);
}

int Writer::write(const void *data, size_t len, psb_error *err) {
  if (len < kHeaderSize) {
    psb_set_error(err, "cyclonedds: a message of %zu bytes is shorter than the %zu-byte header", len, kHeaderSize);
    return -1;
  }
  dds_return_t rc;
  if (complex_) {
    header_from_message(&complex_sample_.header, data);
    rc = dds_write(writer_, &complex_sample_);
  } else {
    header_from_message(&bytes_.header, data);
    const uint32_t n = static_cast<uint32_t>(len - kHeaderSize);
    bytes_.payload._buffer = n ? const_cast<uint8_t *>(static_cast<const uint8_t *>(data) + kHeaderSize) : nullptr;
    bytes_.payload._length = bytes_.payload._maximum = n;
    bytes_.payload._release = false;
    rc = dds_write(writer_, &bytes_);
  }
  return rc == DDS_RETCODE_OK ? 0 : failed(rc, len, err);
}

int Writer::flush(psb_error *) {
  dds_write_flush(writer_);  // returns nothing in Cyclone 0.10.2: it cannot fail
  return 0;
}

int Writer::drain(int64_t timeout_ns, psb_error *err) {
  // The flush sends what WriteBatch holds back; after it a best-effort writer holds
  // nothing (dds_write sends at once), and dds_wait_for_acks returns OK at once for it.
  dds_write_flush(writer_);
  const dds_return_t rc = dds_wait_for_acks(writer_, timeout_ns);
  if (rc == DDS_RETCODE_OK) return 1;
  if (rc == DDS_RETCODE_TIMEOUT) return 0;
  psb_set_error(err, "cyclonedds: dds_wait_for_acks: %s", dds_strretcode(rc));
  return -1;
}

int Writer::failed(dds_return_t rc, size_t len, psb_error *err) const {
  if (rc == DDS_RETCODE_TIMEOUT)
    psb_set_error(err, "cyclonedds: a reliable write of %zu bytes found no room in the writer's history "
                   "within %lld ms (the reader is not keeping up)",
              len, static_cast<long long>(kMaxBlockingTime / DDS_MSECS(1)));
  else if (rc == DDS_RETCODE_OUT_OF_RESOURCES && ctx_->settings.transport == Transport::shm)
    psb_set_error(err, "cyclonedds: write of %zu bytes: no iceoryx chunk that large (iox-roudi's mempools "
                   "are too small for it)", len);
  else
    set_dds_error(err, "write", rc);
  return -1;
}

int Writer::matched_readers() const {
  dds_publication_matched_status_t st;
  return dds_get_publication_matched_status(writer_, &st) == DDS_RETCODE_OK ? static_cast<int>(st.current_count) : -1;
}

}  // namespace psbcyc
