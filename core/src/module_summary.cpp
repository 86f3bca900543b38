#include "module_summary.hpp"

namespace psb {
namespace {

template <typename Record>
void stream_fields(JsonWriter &j, std::string_view key, const RecordStream<Record> &s) {
  j.key(key)
      .begin_object()
      .field("kept", s.kept())
      .field("beyond_capacity", s.beyond_capacity())
      .end_object();
}

}  // namespace

void module_fields(JsonWriter &j, const NodeConfig &n) {
  const ModuleArgs &m = n.module;
  j.key("module")
      .begin_object()
      .field("name", m.name)
      .field("id", *m.id)
      .field("sources", *m.sources);
  j.key("source_index");
  m.source_index ? j.value(*m.source_index) : j.null();
  j.field("period_ns", m.period_ns).field("trigger", trigger_name(m.trigger()));
  j.field("work_ns", m.work_ns).key("work_max_ns");
  m.work_max_ns ? j.value(*m.work_max_ns) : j.null();
  j.key("inputs").begin_array();
  for (auto &in : m.inputs)
    j.begin_object().field("topic", in.topic).field("writers", in.writers).end_object();
  j.end_array().key("outputs").begin_array();
  for (auto &out : m.outputs)
    j.begin_object()
        .field("topic", out.topic)
        .field("size", out.size)
        .field("readers", out.readers)
        .end_object();
  j.end_array();
  j.key("files")
      .begin_object()
      .field("activations", m.name + ".activations")
      .field("origins", m.name + ".origins")
      .field("arrivals", m.name + ".arrivals")
      .end_object();
  j.end_object();
}

void module_counts(JsonWriter &j, const NodeConfig &n, const ModuleResult &r) {
  const ModuleArgs &m = n.module;
  uint64_t write_errors = 0;
  for (auto &o : r.outputs) write_errors += o.write_errors;
  j.key("counts")
      .begin_object()
      .field("activations", r.activation_count)
      .field("overruns", r.overruns)
      .field("warmup", r.warmup)
      .field("write_errors", write_errors);
  j.key("inputs").begin_array();
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    const InputCounts &c = r.inputs[i];
    j.begin_object()
        .field("topic", m.inputs[i].topic)
        .field("received", c.received)
        .field("warmup", c.warmup)
        .field("lost", c.lost)
        .field("duplicated", c.duplicated)
        .field("corrupted", c.corrupted)
        .field("overflow", c.overflow);
    j.key("end_markers")
        .begin_object()
        .field("expected", m.inputs[i].writers)
        .field("seen", c.end_markers)
        .end_object();
    j.end_object();
  }
  j.end_array().key("outputs").begin_array();
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    const OutputCounts &c = r.outputs[o];
    j.begin_object()
        .field("topic", m.outputs[o].topic)
        .field("sent", c.sent)
        .field("warmup", c.warmup)
        .field("write_errors", c.write_errors)
        .end_object();
  }
  j.end_array();
  j.key("records").begin_object();
  stream_fields(j, "activations", r.activations);
  stream_fields(j, "origins", r.origins);
  stream_fields(j, "arrivals", r.arrivals);
  j.end_object().end_object();
}

}  // namespace psb
