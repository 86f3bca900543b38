#include "reader.h"

#include <cstdio>
#include <new>

#include "error.h"

namespace psbcyc {

Reader *Reader::create(Context *ctx, const char *topic, psb_on_data on_data, void *user, psb_error *err) {
  Reader *r = new (std::nothrow) Reader();
  const Settings &s = ctx->settings;
  // One byte more than a message may carry: a sequence Cyclone had to cut to fit shows
  // as one that fills the buffer.
  const size_t buffer_size = s.type == DataType::complex ? kHeaderSize : s.max_payload + 1;
  if (r != nullptr) r->buffer_.reset(new (std::nothrow) uint8_t[buffer_size]);
  if (r == nullptr || !r->buffer_) {
    psb_set_error(err, "cyclonedds: out of memory for a %zu-byte receive buffer", buffer_size);
    delete r;
    return nullptr;
  }
  std::memset(r->buffer_.get(), 0, buffer_size);  // touched now, not on the first take
  r->ctx_ = ctx;
  r->complex_ = s.type == DataType::complex;
  r->elements_ = s.elements;
  r->payload_capacity_ = s.max_payload - kHeaderSize;
  r->on_data_ = on_data;
  r->user_ = user;
  r->topic_ = create_topic(*ctx, topic, err);
  if (r->topic_ < 0) {
    r->topic_ = 0;
    delete r;
    return nullptr;
  }
  dds_listener_t *listener = nullptr;
  if (on_data != nullptr) {
    listener = dds_create_listener(r);
    dds_lset_data_available(listener, &Reader::on_data_available);
  }
  r->reader_ = dds_create_reader(ctx->participant, r->topic_, ctx->qos, listener);
  if (listener != nullptr) dds_delete_listener(listener);
  if (r->reader_ < 0) {
    set_dds_error(err, "cannot create a reader", r->reader_);
    r->reader_ = 0;
    delete r;
    return nullptr;
  }
  if (!endpoint_on_shm(*ctx, r->reader_, "reader", err)) {
    delete r;
    return nullptr;
  }
  if (s.notify == PSB_NOTIFY_WAIT) {
    r->waitset_ = dds_create_waitset(ctx->participant);
    r->condition_ = r->waitset_ < 0 ? r->waitset_ : dds_create_readcondition(r->reader_, DDS_ANY_STATE);
    dds_return_t rc = r->condition_ < 0 ? r->condition_ : dds_waitset_attach(r->waitset_, r->condition_, 0);
    if (rc < 0) {
      set_dds_error(err, "cannot set up the reader's waitset", rc);
      if (r->waitset_ < 0) r->waitset_ = 0;
      if (r->condition_ < 0) r->condition_ = 0;
      delete r;
      return nullptr;
    }
  }
  return r;
}

Reader::~Reader() {
  closing_ = true;
  if (waitset_ > 0) dds_delete(waitset_);
  if (condition_ > 0) dds_delete(condition_);
  if (reader_ > 0) dds_delete(reader_);  // waits for a listener callback in progress
  if (topic_ > 0) dds_delete(topic_);
  if (complex_) free_complex(&complex_sample_);
}

int Reader::take_now(dds_entity_t reader, size_t *len, psb_error *err) {
  bad_sample_ = false;
  void *sample;
  if (complex_) {
    sample = &complex_sample_;
  } else {
    // Deserialize the payload into the buffer, after room for the header.
    bytes_.payload._buffer = buffer_.get() + kHeaderSize;
    bytes_.payload._maximum = static_cast<uint32_t>(payload_capacity_ + 1);
    bytes_.payload._length = 0;
    bytes_.payload._release = false;
    sample = &bytes_;
  }
  for (;;) {
    dds_sample_info_t info;
    const dds_return_t n = dds_take(reader, &sample, &info, 1, 1);
    if (n < 0) {
      set_dds_error(err, "take", n);
      return -1;
    }
    if (n == 0) return 0;
    // Skip what carries no data (e.g. "no writers left" on the instance).
    if (info.valid_data) {
      const int got = unpack(len, err);
      bad_sample_ = got < 0;
      return got;
    }
  }
}

int Reader::unpack(size_t *len, psb_error *err) {
  if (complex_) {
    if (!complex_shape_ok(&complex_sample_, elements_, err)) return -1;
    header_to_message(buffer_.get(), &complex_sample_.header);
    *len = kHeaderSize;
    return 1;
  }
  if (bytes_.payload._buffer != buffer_.get() + kHeaderSize || bytes_.payload._length > payload_capacity_) {
    psb_set_error(err, "cyclonedds: received a message larger than this run's %zu bytes; "
                   "do both sides use the same --size?", payload_capacity_ + kHeaderSize);
    return -1;
  }
  header_to_message(buffer_.get(), &bytes_.header);
  *len = kHeaderSize + bytes_.payload._length;
  return 1;
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  int got = 0;
  if (timeout_ns > 0 && waitset_ > 0) {
    // Wait first: the read condition is already triggered when a sample is waiting, so
    // each message costs one wait and one take.
    const dds_time_t deadline = dds_time() + timeout_ns;
    for (dds_duration_t left = timeout_ns; got == 0 && left > 0; left = deadline - dds_time()) {
      const dds_return_t rc = dds_waitset_wait(waitset_, nullptr, 0, left);
      if (rc < 0) {
        set_dds_error(err, "waiting for data", rc);
        return -1;
      }
      if (rc > 0) got = take_now(reader_, len, err);
    }
  } else {
    got = take_now(reader_, len, err);
  }
  if (got == 1) *data = buffer_.get();
  return got;
}

void Reader::on_data_available(dds_entity_t reader, void *self) {
  static_cast<Reader *>(self)->drain(reader);
}

void Reader::drain(dds_entity_t reader) {
  for (;;) {
    size_t len = 0;
    psb_error err;
    const int got = take_now(reader, &len, &err);
    if (got == 1) {
      on_data_(user_, buffer_.get(), len);
      continue;
    }
    // Cyclone may still call the listener while the reader is being deleted, when its
    // handle can no longer be taken from: nothing is missed then.
    if (got < 0 && !bad_sample_ && closing_.load()) return;
    // A listener cannot hand an error to the node; say it once on stderr. The sample
    // is then missing, which the node counts.
    if (got < 0 && !listener_error_reported_.exchange(true)) std::fprintf(stderr, "%s\n", err.message);
    if (got == 0 || !bad_sample_) return;  // after a bad sample, go on with the next
  }
}

void Reader::counters(psb_put_counter put, void *user) const {
  dds_sample_lost_status_t lost{};
  if (dds_get_sample_lost_status(reader_, &lost) == DDS_RETCODE_OK)
    put(user, "sample_lost", uint64_t(lost.total_count));
  dds_sample_rejected_status_t rejected{};
  if (dds_get_sample_rejected_status(reader_, &rejected) == DDS_RETCODE_OK)
    put(user, "sample_rejected", uint64_t(rejected.total_count));
}

int Reader::matched_writers() const {
  dds_subscription_matched_status_t st;
  return dds_get_subscription_matched_status(reader_, &st) == DDS_RETCODE_OK ? static_cast<int>(st.current_count) : -1;
}

}  // namespace psbcyc
