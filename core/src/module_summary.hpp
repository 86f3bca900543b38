// The module's parts of its summary NAME.json (docs/graphs.md): what it is ("module")
// and what it counted ("counts", in place of the other roles' counts).
#pragma once
#include "config.hpp"
#include "json_writer.hpp"
#include "module_records.hpp"

namespace psb {

void module_fields(JsonWriter &j, const NodeConfig &n);
void module_counts(JsonWriter &j, const NodeConfig &n, const ModuleResult &m);

}  // namespace psb
