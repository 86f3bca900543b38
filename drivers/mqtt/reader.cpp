#include "reader.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "connection.h"
#include "psbench/driver_support.h"

namespace psbmqtt {

Reader *Reader::create(Connection *c, const char *topic, psb_on_data on_data, void *user,
                       psb_error *err) {
  const Settings &s = c->settings();
  if ((on_data != nullptr) != (s.notify == PSB_NOTIFY_LISTENER)) {
    psb_set_error(err, "mqtt: on_data must be given exactly in listener mode");
    return nullptr;
  }
  std::string name = mqtt_topic(s, topic);
  if (mosquitto_sub_topic_check(name.c_str()) != MOSQ_ERR_SUCCESS ||
      name.find_first_of("+#") != std::string::npos) {
    psb_set_error(err, "mqtt: '%s' is not a valid MQTT topic without wildcards", name.c_str());
    return nullptr;
  }
  if (c->lost()) {
    c->lost_error(err);
    return nullptr;
  }
  std::unique_ptr<Reader> r(new Reader(c, std::move(name)));
  r->on_data_ = on_data;
  r->user_ = user;
  if (on_data == nullptr) {
    r->slot_size_ = size_t(s.max_payload);
    try {
      r->storage_.resize(kSlots * r->slot_size_);
    } catch (const std::bad_alloc &) {
      psb_set_error(err, "mqtt: out of memory for %zu receive slots of %zu bytes", kSlots,
                r->slot_size_);
      return nullptr;
    }
    std::memset(r->storage_.data(), 0, r->storage_.size());  // touched now, not on first use
  }
  if (!c->add_reader(r.get(), err)) return nullptr;
  r->registered_ = true;
  if (!c->subscribe(r->topic_, s.qos, err)) return nullptr;  // ~Reader unregisters
  return r.release();
}

Reader::~Reader() {
  if (!registered_) return;
  conn_->remove_reader(this);
  if (!conn_->lost()) conn_->unsubscribe(topic_);
}

void Reader::deliver(const void *payload, size_t len) {
  if (len == 0) return;  // a retained message being cleared
  if (on_data_ != nullptr) {
    on_data_(user_, payload, len);
    return;
  }
  if (len > slot_size_) {
    if (oversized_++ == 0) oversized_len_ = len;
    return;
  }
  if (count_ < kSlots && spill_.empty()) {
    const size_t idx = (head_ + count_) % kSlots;
    std::memcpy(storage_.data() + idx * slot_size_, payload, len);
    lengths_[idx] = len;
    ++count_;
    return;
  }
  // More messages in one loop pass than slots (QoS 1 only): keep them, in order.
  const auto *p = static_cast<const uint8_t *>(payload);
  spill_.emplace_back(p, p + len);
  ++spilled_;
}

void Reader::release_locked() {
  if (!held_) return;
  held_ = false;
  if (held_spill_) {
    held_spill_ = false;
    return;
  }
  head_ = (head_ + 1) % kSlots;
  --count_;
}

void Reader::release() {
  if (on_data_ != nullptr) return;
  std::lock_guard<std::mutex> lock(conn_->io);
  release_locked();
}

int Reader::hand_out(const void **data, size_t *len, psb_error *err) {
  if (oversized_ != 0) {
    psb_set_error(err, "mqtt: received a %zu-byte message on %s, over this run's max_payload of %zu "
                   "bytes (is another run publishing on it?)",
              oversized_len_, topic_.c_str(), slot_size_);
    oversized_ = 0;
    return -1;
  }
  if (count_ > 0) {
    *data = storage_.data() + head_ * slot_size_;
    *len = lengths_[head_];
  } else {
    held_copy_.swap(spill_.front());
    spill_.pop_front();
    held_spill_ = true;
    *data = held_copy_.data();
    *len = held_copy_.size();
  }
  held_ = true;
  return 1;
}

int Reader::take(int64_t timeout_ns, const void **data, size_t *len, psb_error *err) {
  if (on_data_ != nullptr) {
    psb_set_error(err, "mqtt: take() is not used in listener mode");
    return -1;
  }
  std::lock_guard<std::mutex> lock(conn_->io);
  release_locked();
  if (have() || oversized_ != 0) return hand_out(data, len, err);
  if (conn_->lost()) return conn_->lost_error(err);
  if (timeout_ns == 0) {  // poll: one non-blocking pass
    if (conn_->pump(0) != MOSQ_ERR_SUCCESS) return conn_->lost_error(err);
    return have() || oversized_ != 0 ? hand_out(data, len, err) : 0;
  }
  const int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
  for (;;) {
    const int64_t left = deadline - now_ns();
    if (left <= 0) return 0;
    // mosquitto_loop counts in milliseconds: round up, so a short wait still waits.
    const int64_t ms = left >= 1'000'000'000 ? 1000 : (left + 999'999) / 1'000'000;
    errno = 0;
    if (conn_->pump(int(ms)) != MOSQ_ERR_SUCCESS) return conn_->lost_error(err);
    if (have() || oversized_ != 0) return hand_out(data, len, err);
    // mosquitto_loop() reports an interrupted select() as success; errno still says.
    if (errno == EINTR) return 0;
  }
}

}  // namespace psbmqtt
