// relay: the middle process of a three-process echo (P1 pub -> P2 relay -> P3 sub).
// Takes every message on psb_<run>_<topic> and writes it byte for byte on
// psb_<run>_<topic>_relay, flushing after each write when the driver can; the end
// marker is forwarded too and ends the relay. The sub given --topic <topic>_relay
// records P3's receive time minus P1's intended send time (one host, one clock).
#include "message.hpp"
#include "receive_loop.hpp"
#include "role.hpp"

namespace psb {
namespace {

struct RelaySink : ForwardingSink {
  RelaySink(const psb_driver &d, RoleCounts &c) : driver(d), counts(c) {}

  void on_message(const void *data, size_t len, int64_t) {
    uint32_t flags = len >= kHeaderSize ? read_header(data).flags : 0;
    const bool measured = !(flags & (kFlagEnd | kFlagHandshake | kFlagWarmup));
    psb_error err;
    // Every end marker the publisher repeats is forwarded: one lost on the second hop
    // must not leave the sub waiting.
    if (write_now(driver, writer, data, len, &err) != 0) {
      if (counts.write_errors++ == 0) first_error = err.message;
    } else if (measured) {
      ++counts.sent;
    }
    if (measured) ++counts.received;
    if (flags & kFlagWarmup) ++counts.warmup;
    if (flags & kFlagEnd) ended.store(true, std::memory_order_release);
  }

  const psb_driver &driver;
  RoleCounts &counts;
};

}  // namespace

void run_relay(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const NodeConfig &node = env.node;
  res.topics = {topic_name(node, node.topic), topic_name(node, node.topic + "_relay")};
  RelaySink sink(env.driver, res.counts);
  const int64_t t_open = res.opened_ns = now_ns();
  open_forwarding(env, ep, res.topics[0], res.topics[1], sink);
  // Both hops matched before the start: what pub sends in between would be lost.
  bool timed = wait_until_matched(env, &Endpoints::matched_readers, ep, int(node.subscribers),
                                  "relay readers (the sub given --topic <topic>_relay)");
  if (wait_until_matched(env, &Endpoints::matched_writers, ep, int(node.publishers),
                         "publishers") &&
      timed) {
    res.matched_ns = now_ns();
    res.discovery_ns = res.matched_ns - t_open;
  }
  if (!arrive_ready(env, res)) return;
  receive_loop(env, ep, sink, res, "pub");
  announce_window(node, "end");
  if (res.counts.write_errors)
    res.warning = std::to_string(res.counts.write_errors) +
                  " relayed writes failed; first: " + sink.first_error;
}

}  // namespace psb
