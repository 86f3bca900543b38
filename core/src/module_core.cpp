#include "module_core.hpp"

#include <ctime>

namespace psb {

ModuleCore::ModuleCore(const RoleEnv &env, RoleResult &res, ModuleResult &out)
    : env_(env),
      res_(res),
      out_(out),
      m_(env.node.module),
      sources_(*env.node.module.sources),
      inputs_(m_.inputs.size()),
      outputs_(m_.outputs.size()),
      merged_(sources_),
      warmup_(env.node.warmup_for(Role::module)),
      work_(m_.work_ns, m_.work_max_ns ? *m_.work_max_ns : m_.work_ns, *m_.id) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!m_.inputs[i].feedback) ++awaited_inputs_;
    for (uint32_t w = 0; w < m_.inputs[i].writers; ++w)
      inputs_[i].writers.push_back(std::make_unique<WriterSlot>());
    inputs_[i].latest.assign(sources_, OriginEntry{});
  }
  for (size_t o = 0; o < outputs_.size(); ++o) outputs_[o].buf.assign(m_.outputs[o].size, 0);
  out_.inputs.resize(inputs_.size());
  out_.outputs.resize(outputs_.size());
}

void ModuleCore::make_inboxes() {
  for (auto &in : inputs_) in.inbox = std::make_unique<Inbox>(graph_message_size(sources_));
}

ModuleCore::WriterSlot *ModuleCore::writer_slot(InputState &in, uint32_t id) {
  for (auto &w : in.writers) {
    if (w->used && w->id == id) return w.get();
    if (!w->used) {
      w->used = true;
      w->id = id;
      return w.get();
    }
  }
  return nullptr;  // more writers than --input says
}

void ModuleCore::on_arrival(size_t i, const uint8_t *data, uint64_t len, int64_t t) {
  InputState &in = inputs_[i];
  InputCounts &c = out_.inputs[i];
  if (res_.first_receive_ns == 0) res_.first_receive_ns = t;
  if (len < kHeaderSize) {
    ++c.corrupted;
    return;
  }
  const MessageHeader h = read_header(data);
  if (h.flags & kFlagHandshake) return;
  WriterSlot *w = writer_slot(in, h.writer_id);
  if (!w) {
    ++c.corrupted;
    return;
  }
  if (h.flags & kFlagEnd) {
    if (!w->ended) {
      w->ended = true;
      w->end_seq = h.seq;
      if (++c.end_markers == m_.inputs[i].writers && !m_.inputs[i].feedback) ++ended_inputs_;
    }
    return;
  }
  const GraphHeader g =
      len >= graph_message_size(sources_) ? read_graph_header(data) : GraphHeader{0, 0, 0, 0};
  if (g.magic != kGraphMagic || g.sources != sources_) {
    ++c.corrupted;
    return;
  }
  if (w->window.mark(h.seq) == SeqWindow::Seen::duplicate) {
    ++c.duplicated;
    return;
  }
  ++w->distinct;
  if (h.seq + 1 > w->next_seq) w->next_seq = h.seq + 1;
  const bool warm = h.flags & kFlagWarmup;
  if (warm) {
    ++c.warmup;
  } else {
    ++c.received;
    out_.arrivals.add(ArrivalRecord{h.seq, h.send_ns, t, uint32_t(i), h.writer_id});
  }
  std::memcpy(in.latest.data(), data + kOriginTableOffset, sizeof(OriginEntry) * sources_);
  in.has = in.fresh = true;
  in.warm = warm;
  switch (m_.trigger()) {
    case Trigger::any:
      activate(uint32_t(i), t);
      break;
    case Trigger::all:
      for (auto &other : inputs_)
        if (!other.fresh) return;
      activate(uint32_t(i), t);
      break;
    case Trigger::timer:
      break;
  }
}

void ModuleCore::activate(uint32_t trigger, int64_t scheduled_ns) {
  const int64_t start = now_ns();
  const uint64_t a = activation_++;
  bool warm = false;
  clear_origins(merged_.data(), sources_);
  if (m_.is_source()) {
    const uint32_t j = *m_.source_index;
    merged_[j] = OriginEntry{a, start, start, j, 1};
    warm = a < warmup_;
  }
  // What this activation uses: the newest message of each input (for any, the one that
  // came is the newest of its input).
  for (auto &in : inputs_) {
    if (!in.has) continue;
    merge_origins(merged_.data(), in.latest.data(), sources_);
    in.fresh = false;
  }
  // Warm-up unless some source's newest sample behind it is past that source's warm-up
  // (every source has the same --warmup). Not "any input was warm-up": through a cycle
  // that would keep every later activation warm-up for ever.
  if (!m_.is_source()) warm = !measured_origin(merged_.data(), sources_, warmup_);
  const int64_t work_end = start + work_.next();
  while (now_ns() < work_end) {
  }
  write_outputs(a, start, warm);
  const int64_t end = now_ns();
  if (warm) {
    ++out_.warmup;
    return;
  }
  const bool overrun = trigger == kTimerTrigger && end > scheduled_ns + m_.period_ns;
  ++out_.activation_count;
  out_.overruns += overrun;
  out_.activations.add(
      ActivationRecord{a, scheduled_ns, start, end, trigger, overrun ? kActivationOverrun : 0u});
  for (uint32_t j = 0; j < sources_; ++j) {
    const OriginEntry &e = merged_[j];
    if (e.present) out_.origins.add(OriginRecord{a, e.newest_seq, e.newest_ns, e.oldest_ns, j, 0});
  }
}

void ModuleCore::write_outputs(uint64_t activation, int64_t start_ns, bool warm) {
  const uint32_t id = *m_.id;
  for (size_t o = 0; o < outputs_.size(); ++o) {
    OutputState &os = outputs_[o];
    OutputCounts &c = out_.outputs[o];
    uint8_t *b = os.buf.data();
    write_graph_header(b, GraphHeader{kGraphMagic, uint16_t(sources_), uint16_t(id), activation});
    std::memcpy(b + kOriginTableOffset, merged_.data(), sizeof(OriginEntry) * sources_);
    write_header(b, MessageHeader{os.seq, now_ns(), start_ns, id, warm ? kFlagWarmup : 0u});
    psb_error err;
    if (write_now(env_.driver, os.writer, b, os.buf.size(), &err) != 0) {
      if (c.write_errors++ == 0 && first_write_error_.empty()) first_write_error_ = err.message;
      continue;
    }
    ++os.seq;  // written: what a reader can count as lost from here on
    ++(warm ? c.warmup : c.sent);
  }
}

void ModuleCore::end_outputs() {
  for (auto &os : outputs_) {
    if (!env_.driver.drain) break;
    psb_error err{};
    if (env_.driver.drain(os.writer, seconds_to_ns(env_.node.drain_timeout_s), &err) != 1 &&
        res_.warning.empty())
      res_.warning = "an output had not drained within --drain-timeout; what it held may be lost";
  }
  for (long pause_ms : {1, 5, 20}) {
    timespec ts{0, pause_ms * 1'000'000};
    nanosleep(&ts, nullptr);
    for (auto &os : outputs_) {
      uint8_t *b = os.buf.data();
      write_header(b, MessageHeader{os.seq, now_ns(), now_ns(), *m_.id, kFlagEnd});
      psb_error err;
      (void)write_now(env_.driver, os.writer, b, os.buf.size(), &err);  // repeats: not counted
    }
  }
}

void ModuleCore::settle_counts() {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    InputCounts &c = out_.inputs[i];
    if (inputs_[i].inbox) c.overflow = inputs_[i].inbox->overflow();
    for (auto &w : inputs_[i].writers) {
      if (!w->used) continue;
      const uint64_t expected = w->ended ? std::max(w->end_seq, w->next_seq) : w->next_seq;
      c.lost += expected > w->distinct ? expected - w->distinct : 0;
    }
  }
}

}  // namespace psb
