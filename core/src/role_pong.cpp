// pong: writes every message it takes straight back, byte for byte (or, with
// --reply-size, only its first bytes, the header intact: an acknowledgement), and ends
// on the end marker, which it echoes too.
#include "message.hpp"
#include "receive_loop.hpp"
#include "role.hpp"

namespace psb {
namespace {

struct PongSink : ForwardingSink {
  PongSink(const psb_driver &d, const NodeConfig &n, RoleResult &r)
      : driver(d), node(n), res(r), counts(r.counts) {}

  void on_message(const void *data, size_t len, int64_t t) {
    if (res.first_receive_ns == 0) res.first_receive_ns = t;
    const uint32_t flags = len >= kHeaderSize ? read_header(data).flags : 0;
    psb_error err;
    // The ping waits for this echo: nothing may stay in a write batch.
    const size_t reply = node.reply_length(len);
    if (flags & kFlagEnd) {  // echoed too: the ping stops repeating it once it is back
      write_now(driver, writer, data, reply, &err);
      ended.store(true, std::memory_order_release);
      return;
    }
    const bool ok = write_now(driver, writer, data, reply, &err) == 0;
    if (!ok && counts.write_errors++ == 0) first_error = err.message;
    // Counted as ping counts them: warm-up apart, handshakes not at all.
    if (flags & kFlagHandshake) return;
    if (flags & kFlagWarmup) {
      ++counts.warmup;
      return;
    }
    ++counts.received;
    counts.sent += ok;
  }

  const psb_driver &driver;
  const NodeConfig &node;
  RoleResult &res;
  RoleCounts &counts;
};

}  // namespace

void run_pong(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  res.topics = {topic_name(env.node, "ping"), topic_name(env.node, "pong")};
  PongSink sink(env.driver, env.node, res);
  res.opened_ns = now_ns();
  open_forwarding(env, ep, res.topics[0], res.topics[1], sink);
  if (!arrive_ready(env, res)) return;
  receive_loop(env, ep, sink, res, "ping");
  if (res.counts.write_errors)
    res.warning =
        std::to_string(res.counts.write_errors) + " echoes failed; first: " + sink.first_error;
}

}  // namespace psb
