// pub: writes messages at a fixed rate (open loop) or back to back (--rate 0), after
// waiting until its subscribers are matched.
#include "message.hpp"
#include "role.hpp"
#include "schedule.hpp"
#include "sender.hpp"

namespace psb {

void run_pub(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const int64_t t_open = now_ns();
  res.topics = {topic_name(env.node, "data")};
  ep.open(env.cfg);
  ep.create_writer(res.topics[0]);
  if (wait_until_matched(env, &Endpoints::matched_readers, ep, int(env.node.subscribers), "subscribers"))
    res.discovery_ns = now_ns() - t_open;
  if (!arrive_ready(env, res)) return;

  const bool open_loop = !env.node.closed_loop();
  Sender sender(env, ep.writer(), open_loop);
  const uint64_t warmup = env.node.warmup_for(Role::pub);
  OpenLoopSchedule sched(now_ns() + 1'000'000, open_loop ? env.node.rate_hz : 1.0);
  auto due = [&](uint64_t i) { return open_loop ? sched.due_ns(i) : now_ns(); };
  auto send_at = [&](uint64_t i, uint64_t seq, uint32_t flags, RoleCounts &counts) {
    int64_t t = due(i);
    if (open_loop) wait_until(t, env.node.spin_send);
    sender.send(seq, flags, open_loop ? t : 0, counts);
  };
  RoleCounts scratch;
  for (uint64_t i = 0; i < warmup && !run_stopped(env, res); ++i) send_at(i, i, kFlagWarmup, scratch);
  res.counts.warmup = warmup;
  res.measure_start_ns = due(warmup);
  for (uint64_t seq = 0; !measurement_finished(env, res, seq, due(warmup + seq)); ++seq) {
    ++res.counts.sent;
    send_at(warmup + seq, seq, 0, res.counts);
  }
  res.measure_end_ns = now_ns();
  send_end_markers(sender, res.counts.sent);
  if (res.counts.write_errors)
    res.warning = std::to_string(res.counts.write_errors) + " writes failed; first: " + sender.first_error();
}

}  // namespace psb
