// Single-producer single-consumer ring arithmetic over a segment's slots.
//
// head (written by the writer) and tail (written by the reader) are 32-bit
// counters running in [0, modulus), where modulus is the largest multiple of
// slot_count not above 2^31, so counter c always lives in slot c % slot_count
// and each side can step its slot index alongside its counter (no division on
// the timed path). used = head - tail (mod modulus) is in [0, slot_count]:
// equal counters mean empty, used == slot_count means full.
#ifndef PSBENCH_SHM_RING_H
#define PSBENCH_SHM_RING_H

#include <cstddef>
#include <cstdint>

#include "segment.h"

namespace psbshm {

inline uint32_t ring_next(uint32_t c, uint32_t modulus) { return c + 1 == modulus ? 0 : c + 1; }

inline uint32_t ring_used(uint32_t head, uint32_t tail, uint32_t modulus) {
  return head >= tail ? head - tail : head + (modulus - tail);
}

// The ring geometry, copied out of the segment header once at attach.
struct RingView {
  SegmentHeader *hdr = nullptr;
  unsigned char *slots = nullptr;
  uint64_t stride = 0;
  uint64_t slot_size = 0;
  uint32_t count = 0;
  uint32_t modulus = 0;

  void bind(const Segment &seg) {
    hdr = seg.hdr;
    slots = seg.slots;
    stride = seg.hdr->slot_stride;
    slot_size = seg.hdr->slot_size;
    count = seg.hdr->slot_count;
    modulus = seg.hdr->modulus;
  }
  uint32_t next_index(uint32_t idx) const { return idx + 1 == count ? 0 : idx + 1; }
  // A slot is [uint64_t len][pad to kSlotDataOffset][data].
  uint64_t *slot_len(uint32_t idx) const {
    return reinterpret_cast<uint64_t *>(slots + stride * idx);
  }
  unsigned char *slot_data(uint32_t idx) const { return slots + stride * idx + kSlotDataOffset; }
};

}  // namespace psbshm

#endif
