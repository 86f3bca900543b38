// A module's message (docs/graphs.md): the 32-byte header, a 16-byte graph header, then
// one origin entry per source of the graph, and the merge that carries the sources'
// timestamps unchanged through any fusion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace psb {

constexpr uint32_t kGraphMagic = 0x47425350;  // "PSBG" little-endian
constexpr size_t kGraphHeaderOffset = 32;
constexpr size_t kOriginTableOffset = 48;

struct GraphHeader {
  uint32_t magic;
  uint16_t sources;
  uint16_t module_id;
  uint64_t activation;
};
static_assert(sizeof(GraphHeader) == 16, "the graph header is part of the wire contract");

struct OriginEntry {
  uint64_t newest_seq;  // the source's activation behind newest_ns
  int64_t newest_ns;    // start of the freshest activation of the source behind this data
  int64_t oldest_ns;    // start of the stalest one
  uint32_t source;      // = its index in the table
  uint32_t present;     // 0: derives from no sample of this source
};
static_assert(sizeof(OriginEntry) == 32, "an origin entry is part of the wire contract");

// The smallest message that holds the origin table of a graph of `sources` sources.
constexpr uint64_t graph_message_size(uint64_t sources) {
  return kOriginTableOffset + sizeof(OriginEntry) * sources;
}

inline void write_graph_header(void *buf, const GraphHeader &g) {
  std::memcpy(static_cast<uint8_t *>(buf) + kGraphHeaderOffset, &g, sizeof g);
}

inline GraphHeader read_graph_header(const void *buf) {
  GraphHeader g;
  std::memcpy(&g, static_cast<const uint8_t *>(buf) + kGraphHeaderOffset, sizeof g);
  return g;
}

// Empties a table: every source absent, each entry naming its source.
inline void clear_origins(OriginEntry *table, uint32_t sources) {
  for (uint32_t j = 0; j < sources; ++j) table[j] = OriginEntry{0, 0, 0, j, 0};
}

// Folds `from` into `into`: an entry is present when present in either; newest_ns is the
// larger (with its newest_seq), oldest_ns the smaller.
inline void merge_origins(OriginEntry *into, const OriginEntry *from, uint32_t sources) {
  for (uint32_t j = 0; j < sources; ++j) {
    const OriginEntry &f = from[j];
    if (!f.present) continue;
    OriginEntry &t = into[j];
    if (!t.present) {
      t = f;
      t.source = j;
      continue;
    }
    if (f.newest_ns > t.newest_ns || (f.newest_ns == t.newest_ns && f.newest_seq > t.newest_seq)) {
      t.newest_ns = f.newest_ns;
      t.newest_seq = f.newest_seq;
    }
    if (f.oldest_ns < t.oldest_ns) t.oldest_ns = f.oldest_ns;
  }
}

// Whether a table holds a sample past the warm-up: some present source's newest sample
// is at or after activation `warmup` of that source (sources share one --warmup).
inline bool measured_origin(const OriginEntry *table, uint32_t sources, uint64_t warmup) {
  for (uint32_t j = 0; j < sources; ++j)
    if (table[j].present && table[j].newest_seq >= warmup) return true;
  return false;
}

}  // namespace psb
