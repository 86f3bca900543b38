// rabbitmq: AMQP 0-9-1 through rabbitmq-c (the RabbitMQ C client) and a RabbitMQ broker.
//
// A topic is a fanout exchange "psbench.<run id>.<topic>"; each reader declares its own
// exclusive, auto-delete queue, binds it to the exchange and consumes from it; a writer
// publishes to the exchange. Every writer and reader has a connection of its own
// (connection.h). Reliable: publisher confirms (drain() waits for every one) and consumers
// that acknowledge, with a prefetch count; best effort: no confirms, no-ack consumers.
// Volatile: messages are transient (delivery mode 1) and queues non-durable, nothing is
// written to disk. Persistent (reliable only): durable exchanges, a durable queue per
// reader named for its life, persistent messages (delivery mode 2), and endpoints that
// connect again when the broker goes away (README.md, "Durability persistent"). The C ABI
// table comes from psbench/sdk.hpp (PSB_SDK_DRIVER at the end).
#include <amqp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "connection.h"
#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"
#include "settings.h"

namespace psbrabbitmq {
namespace {

using psb::sdk::fail;

// A reliable writer has at most this many messages unconfirmed; the next write waits for
// confirms (the broker's flow control, as a DDS writer's resource limits).
constexpr uint64_t kConfirmWindow = 8192;
// Durability persistent: a writer keeps a copy of each message until the broker confirms
// it, to publish it again on the next connection when the broker went away first; the
// copies take at most this much (the confirm window is smaller for large messages, 16 at
// least).
constexpr uint64_t kKeptBytes = 64u << 20;
constexpr uint64_t kMinKeptWindow = 16;
// Every this many writes a writer reads, without waiting, what the broker sent it: confirms,
// or the channel's closing (an error is then reported by a write, not only at drain()).
constexpr uint64_t kReadEvery = 64;
// A delivery's header and body follow its method frame at once; waiting longer than this
// for them is an error.
constexpr timeval kRestOfMessage{10, 0};
constexpr timeval kNoWait{0, 0};
// A full confirm window that gets no confirm within this is an error.
constexpr timeval kConfirmWait{10, 0};
constexpr int64_t kListenerSliceNs = 100'000'000;  // how soon a listener sees stop()

amqp_bytes_t bytes_of(const std::string &s) { return {s.size(), const_cast<char *>(s.data())}; }

struct Rabbitmq {
  static constexpr const char *name = "rabbitmq";
  static constexpr const char *description =
      "AMQP 0-9-1 through rabbitmq-c and a RabbitMQ broker over TCP: a fanout exchange per "
      "topic, an exclusive auto-delete queue per reader (persistent: a durable one, persistent "
      "messages, reconnection); reliable = publisher confirms and acknowledging consumers, "
      "best effort = no-ack consumers";
  static std::string version() { return std::string("rabbitmq-c ") + amqp_version(); }
  static psb::sdk::Capabilities capabilities();
  static void check(const psb_config &cfg, psb::sdk::Refusals &r) { parse_settings(cfg, r); }

  class Context;
  class Writer;
  class Reader;
};

psb::sdk::Capabilities Rabbitmq::capabilities() {
  static const char *const transports[] = {"tcp", nullptr};
  static const char *const option_keys[] = {"broker", "prefetch", "security", "security_dir",
                                            nullptr};
  return {.reliability = PSB_BEST_EFFORT | PSB_RELIABLE,
          .durability = PSB_VOLATILE | PSB_PERSISTENT,  // persistent: reliable only
          .history = PSB_KEEP_ALL,  // the queue keeps every message; keep_last: see check()
          .transports = transports,
          .option_keys = option_keys,
          .max_payload = kMaxPayload,
          .crosses_hosts = 1};  // to option broker, wherever it is
}

// The settings only: every endpoint has its own connection.
class Rabbitmq::Context {
 public:
  explicit Context(const psb_config &cfg)
      : settings(psb::sdk::parse_or_throw(cfg, parse_settings)) {}
  const Settings settings;
};

// Declares the topic's exchange (both ends do: whichever comes first creates it):
// fanout, so every bound queue gets every message with no routing key to match;
// not auto-deleted, so a reader leaving never removes it under a writer. Durable for
// durability persistent (it outlives a restart of the broker, with its bindings).
void declare_exchange(Connection &c, const std::string &exchange, bool durable) {
  amqp_exchange_declare(c.state(), kChannel, bytes_of(exchange), amqp_cstring_bytes("fanout"),
                        0 /* passive */, durable ? 1 : 0, 0 /* auto_delete */, 0 /* internal */,
                        amqp_empty_table);
  c.check_rpc("declare the exchange");
}

// What a writer and a reader share: the run's settings, the topic's exchange, their own
// connection and, durability persistent, the reconnections to a broker that went away.
class Endpoint {
 protected:
  Endpoint(const Settings &settings, const char *topic)
      : settings_(settings),
        exchange_(exchange_of(settings.run_id, topic)),
        reliable_(settings.reliable),
        persistent_(settings.persistent) {}

  // One connection attempt, connect(Patience::again), when one is due (persistent only: a
  // volatile endpoint keeps its lost connection, whose calls fail); whether it connected.
  template <class Connect>
  [[gnu::cold, gnu::noinline]] bool reconnect(Connect &&connect) {
    if (!persistent_ || !pacer_.due()) return false;
    pacer_.attempted();
    try {
      connect(Patience::again);
    } catch (const psb::sdk::Error &e) {
      last_failure_ = e.what();  // not back yet (refused, or not answering within 1 s)
      return false;
    }
    ++reconnections_;
    return true;
  }

  const Settings &settings_;
  std::optional<Connection> conn_;  // empty: the broker went away (persistent only)
  const std::string exchange_;
  const bool reliable_;
  const bool persistent_;
  uint64_t reconnections_ = 0;
  psb::sdk::RetryPacer pacer_;  // persistent: at most one connection attempt per 100 ms
  std::string last_failure_;    // of the last connection attempt
};

class Rabbitmq::Writer : Endpoint {
 public:
  Writer(Context &ctx, const char *topic)
      : Endpoint(ctx.settings, topic),
        window_(persistent_ ? std::clamp<uint64_t>(
                                  kKeptBytes / std::max<uint64_t>(ctx.settings.max_payload, 1),
                                  kMinKeptWindow, kConfirmWindow)
                            : kConfirmWindow),
        confirmed_(window_, 0),
        slot_size_(persistent_ ? ctx.settings.max_payload : 0),
        kept_(window_ * slot_size_),
        kept_len_(persistent_ ? window_ : 0) {
    props_._flags = AMQP_BASIC_DELIVERY_MODE_FLAG;
    // Transient: never written to disk; persistent: written to the durable queues' disk
    // before the broker confirms it.
    props_.delivery_mode = persistent_ ? 2 : 1;
    connect(Patience::first);
  }

  // Timed path: amqp_basic_publish encodes the method, header and body frames into the
  // connection's buffer (allocated at login) and sends them in one go, in this thread.
  // Persistent, broker gone: an error at once, or after one connection attempt when one is
  // due (at most one per 100 ms, 1 s at most each).
  void write(const void *data, size_t len) {
    if (!conn_) reconnect_for_write();
    try {
      if (reliable_ && published_ - floor_ >= window_) await_window();
      publish(data, len);
    } catch (const BrokerGone &) {
      if (persistent_) lose();
      throw;
    }
    ++published_;
    if (persistent_) keep(data, len);
    if (published_ % kReadEvery == 0) {
      try {
        read_replies(&kNoWait);
      } catch (const BrokerGone &) {
        // The message was handed to the socket (it may have reached the broker): the
        // write succeeded; the next one reconnects.
        if (!persistent_) throw;
        lose();
      }
    }
  }

  // Reliable: until the broker has confirmed every message published so far (it has
  // routed each to every bound queue, and for persistent written it to their disk). Best
  // effort: every write left the process in write(), and the broker reads a connection's
  // frames in order. Persistent: a broker that goes away meanwhile is reconnected to, and
  // what it had not confirmed is published again and awaited.
  bool drain(int64_t timeout_ns) {
    if (!reliable_) return true;
    const int64_t deadline = psb::sdk::now_ns() + timeout_ns;
    for (;;) {
      if (conn_ && floor_ >= published_) break;
      const int64_t left = deadline - psb::sdk::now_ns();
      if (left <= 0) throw psb::sdk::Timeout(undrained());
      if (!conn_) {
        pacer_.sleep_until_due(left);
        try_reconnect();
        continue;
      }
      const timeval tv{left / 1'000'000'000, (left % 1'000'000'000) / 1000};
      try {
        read_replies(&tv);
      } catch (const BrokerGone &) {
        if (!persistent_) throw;
        lose();
      }
    }
    if (nacked_ > 0)
      fail(
          "drain: the broker refused %llu of the %llu messages published to %s (basic.nack: "
          "an internal error of the broker)",
          (unsigned long long)nacked_, (unsigned long long)published_, exchange_.c_str());
    return true;
  }

  int matched() const { return -1; }  // AMQP does not tell a publisher which queues are bound

  void counters(psb::sdk::CounterSink put) {
    if (reliable_) {
      if (conn_) {
        try {
          read_replies(&kNoWait);  // the confirms that came since the last write
        } catch (const std::exception &) {
          // A connection gone: the counts as they stand.
        }
      }
      put("confirmed", confirmed_before_ + floor_);
      put("nacked", nacked_);
    }
    if (persistent_) {
      put("reconnections", reconnections_);
      put("republished", republished_);
    }
  }

 private:
  void publish(const void *data, size_t len) {
    const amqp_bytes_t body{len, const_cast<void *>(data)};
    const int s = amqp_basic_publish(conn_->state(), kChannel, exchange_bytes_, amqp_empty_bytes,
                                     0 /* mandatory */, 0 /* immediate */, &props_, body);
    if (s != AMQP_STATUS_OK) conn_->fail_status("publish", s);
  }

  // Where the copy of the message of delivery tag `tag` (of this connection) is.
  uint64_t slot(uint64_t tag) const { return (base_ + tag) % window_; }

  // Persistent, timed path: a copy of the message just published (tag published_), in
  // room made at create_writer (no allocation).
  void keep(const void *data, size_t len) {
    if (len > slot_size_)
      fail("publish: a %zu-byte message, over this run's largest of %llu bytes", len,
           (unsigned long long)slot_size_);
    const uint64_t i = slot(published_);
    std::memcpy(kept_.data() + i * slot_size_, data, len);
    kept_len_[i] = len;
  }

  // A connection with its exchange declared and, reliable, confirms on; delivery tags
  // start again at 1. Persistent: what the lost connection left unconfirmed (tags
  // 1..published_ after lose()) is published again first, in its order.
  void connect(Patience patience) {
    conn_.emplace(settings_, "writer", patience);
    try {
      declare_exchange(*conn_, exchange_, persistent_);
      if (reliable_) {
        amqp_confirm_select(conn_->state(), kChannel);
        conn_->check_rpc("turn publisher confirms on");
      }
      for (uint64_t tag = 1; tag <= published_; ++tag) {
        const uint64_t i = slot(tag);
        publish(kept_.data() + i * slot_size_, kept_len_[i]);
        ++republished_;
      }
    } catch (...) {
      conn_.reset();  // what was published again comes again on the next one
      throw;
    }
  }

  // The broker went away: the messages it had not confirmed may be lost (it confirms a
  // persistent message once it is on disk). Their copies move together, in their order,
  // to be tags 1..published_ of the next connection (a compaction towards the oldest:
  // never over a copy still to move); the confirms so far are counted.
  [[gnu::cold]] void lose() {
    uint64_t kept = 0;
    for (uint64_t tag = floor_ + 1; tag <= published_; ++tag) {
      const uint64_t from = slot(tag);
      if (confirmed_[from]) {
        confirmed_[from] = 0;
        ++confirmed_before_;
        continue;
      }
      const uint64_t to = (base_ + floor_ + ++kept) % window_;
      if (to != from) {
        std::memmove(kept_.data() + to * slot_size_, kept_.data() + from * slot_size_,
                     kept_len_[from]);
        kept_len_[to] = kept_len_[from];
      }
    }
    confirmed_before_ += floor_;
    base_ += floor_;
    floor_ = 0;
    published_ = kept;
    conn_.reset();
  }

  // One connection attempt when one is due; whether the writer is connected.
  bool try_reconnect() {
    return reconnect([this](Patience p) { connect(p); });
  }

  [[gnu::cold, gnu::noinline]] void reconnect_for_write() {
    if (try_reconnect()) return;
    fail(
        "publish: the broker at %s is gone; the writer connects again (one attempt per "
        "100 ms)%s%s",
        settings_.broker.text.c_str(),
        last_failure_.empty() ? "" : "; the last: ", last_failure_.c_str());
  }

  std::string undrained() const {
    if (!conn_)
      return psb::sdk::format(
          "drain: the broker at %s went away and did not come back within the timeout (%s)",
          settings_.broker.text.c_str(), exchange_.c_str());
    return psb::sdk::format(
        "drain: the broker at %s confirmed %llu of the %llu messages published to %s within "
        "the timeout",
        settings_.broker.text.c_str(), (unsigned long long)floor_, (unsigned long long)published_,
        exchange_.c_str());
  }

  // The window is full: reads confirms until half of it is free again.
  [[gnu::noinline]] void await_window() {
    while (published_ - floor_ > window_ / 2)
      if (!read_replies(&kConfirmWait))
        fail(
            "publish: the broker at %s confirmed none of the %llu unconfirmed messages of %s "
            "within %lld s",
            settings_.broker.text.c_str(), (unsigned long long)(published_ - floor_),
            exchange_.c_str(), (long long)kConfirmWait.tv_sec);
  }

  // Reads the frames the broker sent, waiting up to tv for the first; whether there was one.
  bool read_replies(const timeval *tv) {
    amqp_frame_t frame;
    int n = conn_->read_frame(frame, tv);
    const bool any = n == 1;
    for (; n == 1; n = conn_->read_frame(frame, &kNoWait)) {
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;  // a returned message's rest
      const amqp_method_t &m = frame.payload.method;
      if (m.id == AMQP_BASIC_ACK_METHOD) {
        const auto *ack = static_cast<const amqp_basic_ack_t *>(m.decoded);
        confirm(ack->delivery_tag, ack->multiple);
      } else if (m.id == AMQP_BASIC_NACK_METHOD) {
        const auto *nack = static_cast<const amqp_basic_nack_t *>(m.decoded);
        nacked_ += nack->multiple ? nack->delivery_tag - floor_ : 1;
        confirm(nack->delivery_tag, nack->multiple);
      } else if (m.id == AMQP_CHANNEL_CLOSE_METHOD || m.id == AMQP_CONNECTION_CLOSE_METHOD) {
        conn_->fail_closed(frame);
      }
    }
    conn_->release();
    return any;
  }

  // Confirms tag (and with multiple every tag up to it); floor_ = every tag up to it is.
  void confirm(uint64_t tag, bool multiple) {
    if (tag > published_ || tag <= floor_) return;
    if (multiple) {
      for (uint64_t t = floor_ + 1; t <= tag; ++t) confirmed_[slot(t)] = 0;
      floor_ = tag;
    } else {
      confirmed_[slot(tag)] = 1;
    }
    while (floor_ < published_ && confirmed_[slot(floor_ + 1)]) {
      confirmed_[slot(floor_ + 1)] = 0;
      ++floor_;
    }
  }

  const amqp_bytes_t exchange_bytes_ = bytes_of(exchange_);
  amqp_basic_properties_t props_{};
  uint64_t published_ = 0;  // delivery tags 1..published_ went out on this connection
  uint64_t floor_ = 0;      // every tag up to here is confirmed
  uint64_t nacked_ = 0;
  const uint64_t window_;           // unconfirmed messages at most (kConfirmWindow, or less)
  std::vector<uint8_t> confirmed_;  // tags above floor_ confirmed alone, at slot(tag)
  // Persistent: the copies of the unconfirmed messages, at slot(tag), across connections.
  const uint64_t slot_size_;       // the run's largest message
  std::vector<uint8_t> kept_;      // window_ slots of slot_size_ bytes
  std::vector<size_t> kept_len_;   // by slot
  uint64_t base_ = 0;              // slot(tag) = (base_ + tag) % window_
  uint64_t confirmed_before_ = 0;  // confirmed on the connections lost so far
  uint64_t republished_ = 0;       // published again on a new connection
};

class Rabbitmq::Reader : Endpoint {
 public:
  Reader(Context &ctx, const char *topic, psb::sdk::Listener listener)
      : Endpoint(ctx.settings, topic),
        ack_every_(uint64_t(ctx.settings.prefetch + 3) / 4),
        body_(ctx.settings.max_payload + 1) {
    if (persistent_) queue_ = durable_queue_of(ctx.settings.run_id, topic);
    subscribe(Patience::first);
    if (listener) {
      thread_.start(listener, [this, listener] {  // a throw ends it: listener.error()
        const void *data;
        size_t len;
        while (!thread_.stopping()) {
          if (try_take(data, len))
            listener(data, len);
          else
            wait(kListenerSliceNs);
        }
      });
    }
  }
  // Stops the listener (within kListenerSliceNs); persistent: deletes the durable queue
  // (what it still holds was for this reader only); then the connection closes.
  ~Reader() {
    thread_.stop();
    if (persistent_ && conn_ && !conn_->lost()) {
      amqp_queue_delete(conn_->state(), kChannel, bytes_of(queue_), 0, 0);
      amqp_get_rpc_reply(conn_->state());  // a failure leaves it to the broker's end
    }
  }

  // Timed path. Never blocks: the next delivery rabbitmq-c has, or can read from the
  // socket now (its header and body follow at once). A body in one frame is handed out
  // where rabbitmq-c decoded it; one split over several frames is copied together.
  // Persistent, broker gone: no sample, and a connection attempt when one is due.
  bool try_take(const void *&data, size_t &len) {
    release();
    if (!conn_ && !try_resubscribe()) return false;
    try {
      return next_delivery(data, len);
    } catch (const BrokerGone &) {
      if (!persistent_) throw;
      lose();
      return false;
    }
  }

  // Until the socket has bytes, up to timeout_ns. Acknowledges what was taken first, so
  // the broker never waits for acks while this reader waits for messages. Persistent,
  // broker gone: sleeps until the next connection attempt is due (or the timeout), makes
  // it, and says whether it connected.
  bool wait(int64_t timeout_ns) {
    if (!conn_) {
      pacer_.sleep_until_due(timeout_ns);
      return try_resubscribe();
    }
    if (unacked_ > 0) {
      ack_or_lose();
      if (!conn_) return false;
    }
    if (conn_->buffered()) return true;
    const int n = psb::sdk::wait_readable(conn_->fd(), -1, timeout_ns);
    if (n < 0) fail("poll: %s", std::strerror(errno));
    return n > 0;
  }

  // The sample handed out is given back: rabbitmq-c's pool is reused; reliable: it counts
  // as taken, acknowledged with the next batch (every prefetch/4, and before waiting).
  void release() {
    if (!held_) return;
    held_ = false;
    conn_->release();
    if (reliable_ && ++unacked_ >= ack_every_) ack_or_lose();
  }

  int matched() const { return -1; }  // AMQP does not tell a consumer who publishes

  void counters(psb::sdk::CounterSink put) {
    if (persistent_) put("reconnections", reconnections_);
  }

 private:
  // A connection consuming from this reader's queue. Volatile: an exclusive, auto-delete
  // queue named by the broker, used by this connection only and deleted with it.
  // Persistent: the durable queue queue_, declared again by every connection (the broker
  // kept it, with its messages and binding, while the reader was away), not exclusive
  // (a consumer of a connection the broker has not noticed gone yet must not block it).
  // No length limit (keep_all). Bound before create_reader returns: the broker routes
  // every later publish to it.
  void subscribe(Patience patience) {
    conn_.emplace(settings_, "reader", patience);
    try {
      Connection &c = *conn_;
      declare_exchange(c, exchange_, persistent_);
      const amqp_queue_declare_ok_t *q = amqp_queue_declare(
          c.state(), kChannel, persistent_ ? bytes_of(queue_) : amqp_empty_bytes, 0 /* passive */,
          persistent_ ? 1 : 0 /* durable */, persistent_ ? 0 : 1 /* exclusive */,
          persistent_ ? 0 : 1 /* auto_delete */, amqp_empty_table);
      c.check_rpc("declare the reader's queue");
      if (!persistent_) queue_.assign(static_cast<const char *>(q->queue.bytes), q->queue.len);
      amqp_queue_bind(c.state(), kChannel, bytes_of(queue_), bytes_of(exchange_), amqp_empty_bytes,
                      amqp_empty_table);
      c.check_rpc("bind the reader's queue");
      if (reliable_) {
        amqp_basic_qos(c.state(), kChannel, 0, uint16_t(settings_.prefetch), 0);
        c.check_rpc("set the prefetch count");
      }
      amqp_basic_consume(c.state(), kChannel, bytes_of(queue_), amqp_empty_bytes, 0 /* no_local */,
                         reliable_ ? 0 : 1 /* no_ack */, persistent_ ? 0 : 1 /* exclusive */,
                         amqp_empty_table);
      c.check_rpc("start consuming");
    } catch (...) {
      conn_.reset();
      throw;
    }
    held_ = false;
    unacked_ = 0;
  }

  // The broker went away: what was taken and not acknowledged comes again (redelivered).
  [[gnu::cold]] void lose() {
    conn_.reset();
    held_ = false;
    unacked_ = 0;
  }

  // One connection attempt when one is due; whether the reader is connected.
  bool try_resubscribe() {
    return reconnect([this](Patience p) { subscribe(p); });
  }

  void ack_or_lose() {
    try {
      send_ack();
    } catch (const BrokerGone &) {
      if (!persistent_) throw;
      lose();
    }
  }

  bool next_delivery(const void *&data, size_t &len) {
    amqp_frame_t frame;
    for (;;) {
      if (conn_->read_frame(frame, &kNoWait) == 0) return false;
      if (frame.frame_type != AMQP_FRAME_METHOD) continue;
      const amqp_method_t &m = frame.payload.method;
      if (m.id == AMQP_BASIC_DELIVER_METHOD) {
        delivery_tag_ = static_cast<const amqp_basic_deliver_t *>(m.decoded)->delivery_tag;
        return read_message(data, len);
      }
      if (m.id == AMQP_CHANNEL_CLOSE_METHOD || m.id == AMQP_CONNECTION_CLOSE_METHOD)
        conn_->fail_closed(frame);
      if (m.id == AMQP_BASIC_CANCEL_METHOD)
        fail("the broker cancelled the consumer of queue %s (was it deleted?)", queue_.c_str());
    }
  }

  bool read_message(const void *&data, size_t &len) {
    amqp_frame_t frame;
    if (conn_->read_frame(frame, &kRestOfMessage) == 0 || frame.frame_type != AMQP_FRAME_HEADER)
      fail("the broker sent a delivery without its header within %lld s",
           (long long)kRestOfMessage.tv_sec);
    const uint64_t size = frame.payload.properties.body_size;
    uint64_t got = 0;
    held_ = true;
    data = body_.data();
    while (got < size) {
      if (conn_->read_frame(frame, &kRestOfMessage) == 0 || frame.frame_type != AMQP_FRAME_BODY)
        fail("the broker sent a delivery without its body within %lld s",
             (long long)kRestOfMessage.tv_sec);
      const amqp_bytes_t &part = frame.payload.body_fragment;
      if (got == 0 && part.len == size) {  // the whole body in one frame: no copy
        data = part.bytes;
        got = size;
        break;
      }
      if (size <= body_.size() - 1) std::memcpy(body_.data() + got, part.bytes, part.len);
      got += part.len;
    }
    if (size > body_.size() - 1)
      psb::sdk::bad_sample(
          "received a %llu-byte message on queue %s, over this run's largest "
          "of %zu bytes (is another run publishing on it?)",
          (unsigned long long)size, queue_.c_str(), body_.size() - 1);
    len = size_t(size);
    return true;
  }

  void send_ack() {
    const int s = amqp_basic_ack(conn_->state(), kChannel, delivery_tag_, 1 /* multiple */);
    if (s != AMQP_STATUS_OK) conn_->fail_status("acknowledge", s);
    unacked_ = 0;
  }

  const uint64_t ack_every_;
  std::string queue_;
  std::vector<unsigned char> body_;  // max_payload + 1: a body split over several frames
  bool held_ = false;                // a sample is handed out
  uint64_t delivery_tag_ = 0;        // of the last delivery taken
  uint64_t unacked_ = 0;             // taken, not acknowledged yet (reliable)
  psb::sdk::ListenerThread thread_;  // listener only; last, so that it starts after the rest
};

}  // namespace
}  // namespace psbrabbitmq

PSB_SDK_DRIVER(psbrabbitmq::Rabbitmq)
