#include "writer.h"

#include <cerrno>
#include <memory>
#include <mutex>

#include "connection.h"
#include "psbench/driver_support.h"

namespace psbmqtt {
namespace {

constexpr int64_t kServiceEveryNs = 100'000'000;
constexpr int64_t kFlushTimeoutNs = 10'000'000'000;

}  // namespace

Writer *Writer::create(Connection *c, const char *topic, psb_error *err) {
  const Settings &s = c->settings();
  std::string name = mqtt_topic(s, topic);
  if (mosquitto_pub_topic_check(name.c_str()) != MOSQ_ERR_SUCCESS) {
    psb_set_error(err, "mqtt: '%s' is not a valid MQTT topic to publish on", name.c_str());
    return nullptr;
  }
  if (c->lost()) {
    c->lost_error(err);
    return nullptr;
  }
  std::unique_ptr<Writer> w(new Writer(c, std::move(name)));
  w->qos_ = s.qos;
  w->retain_ = s.retain;
  w->self_driven_ = !c->threaded();
  w->max_payload_ = size_t(s.max_payload);
  c->link(w.get());
  return w.release();
}

Writer::~Writer() {
  if (!conn_->lost()) {
    psb_error ignored{};
    // A zero-length retained message removes the topic's retained message from the
    // broker; subscribers get it as an empty message, which readers drop.
    if (retained_something_) publish(nullptr, 0, true, &ignored);
    conn_->flush(kFlushTimeoutNs, &ignored);
  }
  conn_->unlink(this);
}

int Writer::publish(const void *data, size_t len, bool retain, psb_error *err) {
  conn_->count_publish();
  errno = 0;
  const int rc = mosquitto_publish(conn_->mosq(), nullptr, topic_.c_str(), int(len), data, qos_,
                                   retain);
  if (rc != MOSQ_ERR_SUCCESS) {
    const int e = errno;
    conn_->uncount_publish();
    if (rc == MOSQ_ERR_NO_CONN || rc == MOSQ_ERR_CONN_LOST || rc == MOSQ_ERR_ERRNO) {
      conn_->mark_lost(rc, e);
      return conn_->lost_error(err);
    }
    return conn_->fail(err, "publish", rc, e);
  }
  return 0;
}

int Writer::drain(int64_t timeout_ns, psb_error *err) {
  if (conn_->flush(timeout_ns, err)) return 1;
  return conn_->lost() ? -1 : 0;
}

int Writer::write(const void *data, size_t len, psb_error *err) {
  if (conn_->lost()) return conn_->lost_error(err);
  if (len > max_payload_) {
    psb_set_error(err, "mqtt: a %zu-byte message is over this run's max_payload of %zu bytes", len,
              max_payload_);
    return -1;
  }
  if (publish(data, len, retain_, err) != 0) return -1;
  retained_something_ = retain_;
  if (!self_driven_ || conn_->reader_count() != 0) return 0;  // someone else runs the loop
  const int64_t now = qos_ == 0 ? now_ns() : 0;
  if (qos_ == 0 && now < next_service_ns_ && !mosquitto_want_write(conn_->mosq())) return 0;
  std::unique_lock<std::mutex> lock(conn_->io, std::try_to_lock);
  if (!lock.owns_lock()) return 0;
  if (conn_->pump(0) != MOSQ_ERR_SUCCESS) return conn_->lost_error(err);
  if (qos_ == 0) next_service_ns_ = now + kServiceEveryNs;
  return 0;
}

}  // namespace psbmqtt
