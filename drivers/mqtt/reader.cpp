#include "reader.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "connection.h"

namespace psbmqtt {

namespace {

std::string checked_topic(const Connection &c, const char *topic, bool listener) {
  if (listener != (c.settings().notify == PSB_NOTIFY_LISTENER))
    psb::sdk::fail("on_data must be given exactly in listener mode");
  std::string name = mqtt_topic(c.settings(), topic);
  if (mosquitto_sub_topic_check(name.c_str()) != MOSQ_ERR_SUCCESS ||
      name.find_first_of("+#") != std::string::npos)
    psb::sdk::fail("'%s' is not a valid MQTT topic without wildcards", name.c_str());
  if (c.lost()) c.throw_lost();
  return name;
}

}  // namespace

Reader::Reader(Connection &c, const char *topic, psb::sdk::Listener listener)
    : conn_(&c), topic_(checked_topic(c, topic, bool(listener))), on_data_(listener) {
  if (!on_data_) {
    slot_size_ = size_t(c.settings().max_payload);
    try {
      storage_.resize(kSlots * slot_size_);
    } catch (const std::bad_alloc &) {
      psb::sdk::fail("out of memory for %zu receive slots of %zu bytes", kSlots, slot_size_);
    }
    std::memset(storage_.data(), 0, storage_.size());  // touched now, not on first use
  }
  c.add_reader(this);
  registered_ = true;
  try {
    c.subscribe(topic_, c.settings().qos);
  } catch (...) {
    tear_down();
    throw;
  }
}

Reader::~Reader() { tear_down(); }

void Reader::tear_down() {
  if (!registered_) return;
  registered_ = false;
  conn_->remove_reader(this);
  if (!conn_->lost()) conn_->unsubscribe(topic_);
}

void Reader::deliver(const void *payload, size_t len) {
  if (len == 0) return;  // a retained message being cleared
  if (on_data_) {
    on_data_(payload, len);
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
  if (on_data_) return;
  std::lock_guard<std::mutex> lock(conn_->io);
  release_locked();
}

bool Reader::hand_out(const void *&data, size_t &len) {
  if (oversized_ != 0) {
    oversized_ = 0;
    psb::sdk::fail("received a %zu-byte message on %s, over this run's max_payload of %zu "
                   "bytes (is another run publishing on it?)",
                   oversized_len_, topic_.c_str(), slot_size_);
  }
  if (count_ > 0) {
    data = storage_.data() + head_ * slot_size_;
    len = lengths_[head_];
  } else {
    held_copy_.swap(spill_.front());
    spill_.pop_front();
    held_spill_ = true;
    data = held_copy_.data();
    len = held_copy_.size();
  }
  held_ = true;
  return true;
}

bool Reader::take(int64_t timeout_ns, const void *&data, size_t &len) {
  if (on_data_) psb::sdk::fail("take() is not used in listener mode");
  std::lock_guard<std::mutex> lock(conn_->io);
  release_locked();
  if (have() || oversized_ != 0) return hand_out(data, len);
  if (conn_->lost()) conn_->throw_lost();
  if (timeout_ns == 0) {  // poll: one non-blocking pass
    if (conn_->pump(0) != MOSQ_ERR_SUCCESS) conn_->throw_lost();
    return have() || oversized_ != 0 ? hand_out(data, len) : false;
  }
  const int64_t deadline = timeout_ns < 0 ? INT64_MAX : now_ns() + timeout_ns;
  for (;;) {
    const int64_t left = deadline - now_ns();
    if (left <= 0) return false;
    // mosquitto_loop counts in milliseconds: round up, so a short wait still waits.
    const int64_t ms = left >= 1'000'000'000 ? 1000 : (left + 999'999) / 1'000'000;
    errno = 0;
    if (conn_->pump(int(ms)) != MOSQ_ERR_SUCCESS) conn_->throw_lost();
    if (have() || oversized_ != 0) return hand_out(data, len);
    // mosquitto_loop() reports an interrupted select() as success; errno still says.
    if (errno == EINTR) return false;
  }
}

}  // namespace psbmqtt
