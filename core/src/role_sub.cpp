// sub: takes messages and records one-way latency from the intended send time.
#include "message.hpp"
#include "receive_loop.hpp"
#include "role.hpp"

namespace psb {
namespace {

struct SubSink {
  SubSink(const NodeConfig &n, SampleStore &s, RoleCounts &c) : node(n), store(s), counts(c) {}

  void on_message(const void *data, size_t len, int64_t t) {
    if (len < kHeaderSize) {
      ++counts.corrupted;
      return;
    }
    MessageHeader h = read_header(data);
    if (h.flags & kFlagEnd) {
      peer_sent = h.seq;
      end_seen.store(true, std::memory_order_release);
      return;
    }
    if (h.flags & kFlagHandshake) return;
    if (h.flags & kFlagWarmup) {
      ++counts.warmup;
      return;
    }
    ++counts.received;
    if (len != node.size || (node.check_pattern && !check_pattern(data, len, h.seq)))
      ++counts.corrupted;
    else if (store.record(h.seq, h.intended_ns, t - h.intended_ns) == SampleStore::Outcome::recorded &&
             node.count && store.recorded() == *node.count)
      all_in.store(true, std::memory_order_release);
  }
  bool done() const {
    return end_seen.load(std::memory_order_acquire) || all_in.load(std::memory_order_acquire);
  }
  const char *done_reason() const {
    return end_seen.load(std::memory_order_acquire) ? "end_marker" : "count";
  }

  const NodeConfig &node;
  SampleStore &store;
  RoleCounts &counts;
  uint64_t peer_sent = 0;
  std::atomic<bool> end_seen{false}, all_in{false};
  ArrivalSignal signal;
};

}  // namespace

void run_sub(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  res.kind = SampleKind::one_way;
  res.store = std::make_unique<SampleStore>(env.node.sample_capacity());
  res.topics = {topic_name(env.node, "data")};
  SubSink sink(env.node, *res.store, res.counts);
  const int64_t t_open = now_ns();
  ep.open(env.cfg);
  const bool listener = env.node.notify == PSB_NOTIFY_LISTENER;
  ep.create_reader(res.topics[0], listener ? &listener_trampoline<SubSink> : nullptr, &sink);
  // Matching is not symmetric: the writer may see this reader before this reader knows
  // the writer, and what is sent in between is lost. So the reader waits too.
  if (wait_until_matched(env, &Endpoints::matched_writers, ep, 1, "publishers"))
    res.discovery_ns = now_ns() - t_open;
  if (!arrive_ready(env, res)) return;
  receive_loop(env, ep, sink, res, "pub");

  // What the publisher sent: its end marker says; failing that, what was asked for,
  // or (duration runs) the highest sequence number seen, a lower bound.
  uint64_t expected = sink.end_seen ? sink.peer_sent
                      : env.node.count ? *env.node.count
                                       : res.store->seen_span();
  res.counts.sent = expected;
  uint64_t accounted = res.store->recorded() + res.counts.corrupted;
  res.counts.lost = expected > accounted ? expected - accounted : 0;
}

}  // namespace psb
