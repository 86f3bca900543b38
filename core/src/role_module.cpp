// module: one module of an application graph (docs/graphs.md). Setup opens one context
// with a writer per output and a reader per input, waits for its peers, then meets the
// start barrier; the role thread then activates the module on its timer or its inputs
// (ModuleCore) until its count or duration is done (a source) or every input has ended,
// and writes end markers on its outputs.
//
// How inputs are taken, by --notify: poll spins take(0) over every reader on the role
// thread; wait with one input blocks in its take(); wait with several gives each input a
// receiver thread with its own context (InputReceiver), and listener lets the driver's
// threads copy each message into an Inbox, both waking the role thread.
#include <algorithm>
#include <stdexcept>

#include "module_core.hpp"
#include "module_receiver.hpp"
#include "role.hpp"
#include "schedule.hpp"

namespace psb {
namespace {

constexpr int64_t kSliceNs = 50'000'000;  // how often stop conditions are looked at
constexpr uint64_t kDefaultCapacity = 100'000;

enum class Intake { poll, wait_one, inboxes };

// A listener's callback: copy into the input's Inbox, wake the role thread.
struct ListenerHook {
  Inbox *inbox = nullptr;
  ArrivalSignal *signal = nullptr;
  static void on_data(void *self, const void *data, size_t len) {
    const int64_t t = now_ns();
    auto *h = static_cast<ListenerHook *>(self);
    h->inbox->push(data, len, t);
    h->signal->notify();
  }
};

// Destroys the readers (stopping listeners) before what their callbacks use goes away.
struct ReadersFirst {
  Endpoints &ep;
  ~ReadersFirst() { ep.destroy_reader(); }
};

class ModuleLoop {
 public:
  ModuleLoop(const RoleEnv &env, RoleResult &res, ModuleCore &core, Endpoints &ep, Intake intake,
             ArrivalSignal &signal)
      : env_(env),
        node_(env.node),
        m_(env.node.module),
        res_(res),
        core_(core),
        ep_(ep),
        intake_(intake),
        signal_(signal) {}

  void run() {
    const bool timer = m_.trigger() == Trigger::timer;
    const int64_t t0 = res_.measure_start_ns = now_ns();
    const uint64_t warmup = node_.warmup_for(Role::module);
    // A source's measured window starts with its first measured tick.
    const int64_t window_start = t0 + int64_t(warmup) * m_.period_ns;
    uint64_t k = 0;
    int64_t tick = t0;
    for (;;) {
      if (g_interrupted.load(std::memory_order_relaxed)) {
        res_.ended_by = "interrupted";
        break;
      }
      const int64_t now = now_ns();
      if (now >= env_.deadline_ns) {
        res_.ended_by = "timeout";
        break;
      }
      if (m_.is_source()) {
        if (node_.count && k >= warmup + *node_.count) {
          res_.ended_by = "count";
          break;
        }
        if (node_.duration_s && k >= warmup &&
            tick >= window_start + seconds_to_ns(*node_.duration_s)) {
          res_.ended_by = "duration";
          break;
        }
      } else if (core_.inputs_ended()) {
        res_.ended_by = "end_marker";
        break;
      }
      // Due ticks first; one that is late runs at once (no tick is skipped), its
      // lateness kept in its record (start - scheduled).
      if (timer && now >= tick) {
        core_.activate(kTimerTrigger, tick);
        ++k;
        tick = t0 + int64_t(k) * m_.period_ns;
        continue;
      }
      const int64_t until =
          std::min(timer ? std::min(tick, now + kSliceNs) : now + kSliceNs, env_.deadline_ns);
      if (m_.is_source())
        idle_until(until, timer && until == tick);
      else
        take_until(until);
    }
    res_.measure_end_ns = now_ns();
  }

 private:
  // A source has nothing to take: it waits for its tick as an open-loop pub waits
  // (--send-wait), or sleeps a slice between stop checks.
  void idle_until(int64_t until, bool is_tick) {
    if (is_tick) {
      wait_until(until, node_.send_wait, node_.send_spin_ns);
      return;
    }
    const int64_t left = until - now_ns();
    if (left <= 0) return;
    timespec ts{time_t(left / 1'000'000'000), long(left % 1'000'000'000)};
    nanosleep(&ts, nullptr);
  }

  // Takes what arrives until `until` or the first message(s), whichever comes first.
  void take_until(int64_t until) {
    psb_error err;
    const void *data;
    size_t len;
    switch (intake_) {
      case Intake::poll:
        for (;;) {
          bool got = false;
          for (size_t i = 0; i < ep_.readers(); ++i) {
            int r = env_.driver.take(ep_.reader(i), 0, &data, &len, &err);
            if (r < 0) throw std::runtime_error(std::string("receiving: ") + err.message);
            if (r == 1) {
              core_.on_arrival(i, static_cast<const uint8_t *>(data), len, now_ns());
              if (env_.driver.release) env_.driver.release(ep_.reader(i));
              got = true;
            }
          }
          if (got || now_ns() >= until) return;
        }
      case Intake::wait_one: {
        const int64_t left = std::max<int64_t>(0, until - now_ns());
        int r = env_.driver.take(ep_.reader(0), left, &data, &len, &err);
        if (r < 0) throw std::runtime_error(std::string("receiving: ") + err.message);
        if (r == 1) {
          core_.on_arrival(0, static_cast<const uint8_t *>(data), len, now_ns());
          if (env_.driver.release) env_.driver.release(ep_.reader(0));
        }
        return;
      }
      case Intake::inboxes: {
        const uint32_t seen = signal_.current();
        if (drain_inboxes()) return;
        const int64_t left = until - now_ns();
        if (left > 0) signal_.wait(seen, left);
        drain_inboxes();
        return;
      }
    }
  }

  // Hands every message waiting in the inboxes to the module, oldest arrival first
  // across inputs. True when there was one.
  bool drain_inboxes() {
    bool any = false;
    const size_t n = m_.inputs.size();
    for (;;) {
      size_t best = n;
      Inbox::Entry e{}, pick{};
      for (size_t i = 0; i < n; ++i)
        if (core_.inbox(i)->front(e) && (best == n || e.arrival_ns < pick.arrival_ns)) {
          best = i;
          pick = e;
        }
      if (best == n) return any;
      core_.on_arrival(best, pick.bytes, pick.len, pick.arrival_ns);
      core_.inbox(best)->pop();
      any = true;
    }
  }

  const RoleEnv &env_;
  const NodeConfig &node_;
  const ModuleArgs &m_;
  RoleResult &res_;
  ModuleCore &core_;
  Endpoints &ep_;
  Intake intake_;
  ArrivalSignal &signal_;
};

}  // namespace

void run_module(const RoleEnv &env, RoleResult &res, Endpoints &ep) {
  const NodeConfig &node = env.node;
  const ModuleArgs &m = node.module;
  const uint64_t capacity = node.max_samples_given ? node.max_samples : kDefaultCapacity;
  res.module = std::make_shared<ModuleResult>(capacity, *m.sources);
  for (auto &in : m.inputs) res.topics.push_back(topic_name(node, in.topic));
  for (auto &out : m.outputs) res.topics.push_back(topic_name(node, out.topic));

  const Intake intake = node.notify == PSB_NOTIFY_POLL                           ? Intake::poll
                        : node.notify == PSB_NOTIFY_WAIT && m.inputs.size() <= 1 ? Intake::wait_one
                                                                                 : Intake::inboxes;
  ArrivalSignal signal;
  ModuleCore core(env, res, *res.module);
  if (intake == Intake::inboxes) core.make_inboxes();
  std::vector<ListenerHook> hooks(m.inputs.size());
  ReadersFirst readers_first{ep};
  std::vector<std::unique_ptr<InputReceiver>> receivers;

  const int64_t t_open = res.opened_ns = now_ns();
  ep.open(env.cfg);
  for (size_t o = 0; o < m.outputs.size(); ++o) {
    ep.create_writer(topic_name(node, m.outputs[o].topic));
    core.attach_writer(o, ep.writer(o));
  }
  const bool listener = node.notify == PSB_NOTIFY_LISTENER;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string topic = topic_name(node, m.inputs[i].topic);
    if (intake == Intake::inboxes && !listener) {
      receivers.push_back(std::make_unique<InputReceiver>(env, topic, int(m.inputs[i].writers),
                                                          *core.inbox(i), signal));
      continue;
    }
    hooks[i] = ListenerHook{core.inbox(i), &signal};
    ep.create_reader(topic, listener ? &ListenerHook::on_data : nullptr,
                     listener ? &hooks[i] : nullptr);
  }
  // Every peer matched before the start, where the driver can tell: what a source writes
  // before its readers are there is lost.
  bool known = true;
  for (size_t o = 0; o < m.outputs.size(); ++o)
    known &= wait_until_matched(
        env, [&] { return ep.matched_readers_of(o); }, int(m.outputs[o].readers),
        "readers of " + m.outputs[o].topic);
  for (size_t i = 0; i < ep.readers(); ++i)
    known &= wait_until_matched(
        env, [&] { return ep.matched_writers_of(i); }, int(m.inputs[i].writers),
        "writers of " + m.inputs[i].topic);
  for (auto &r : receivers) {
    if (!r->wait_ready()) throw std::runtime_error(r->error());
    known &= r->matched_known();
  }
  if (known) {
    res.matched_ns = now_ns();
    res.discovery_ns = res.matched_ns - t_open;
  }
  if (!arrive_ready(env, res)) return;

  ModuleLoop(env, res, core, ep, intake, signal).run();
  ep.destroy_reader();  // stops the listeners: the counts are final
  for (auto &r : receivers) {
    r->stop();
    if (!r->error().empty()) throw std::runtime_error(r->error());
    ep.add_reader_counters(r->counters());
  }
  // Ended by the run (timeout, interrupt) or by its inputs, it still tells its readers.
  core.end_outputs();
  core.settle_counts();
  const uint64_t errors = [&] {
    uint64_t n = 0;
    for (auto &o : res.module->outputs) n += o.write_errors;
    return n;
  }();
  res.counts.write_errors = errors;
  if (errors)
    res.warning = (res.warning.empty() ? "" : res.warning + "; ") + std::to_string(errors) +
                  " writes failed; first: " + core.first_write_error();
}

}  // namespace psb
