// Layout of one topic's shared-memory segment, and one side's hold on it. The
// segment "/psbench-<run_id>-<topic>" (a file in /dev/shm) holds a header
// followed by slot_count slots:
//
//   [SegmentHeader][slot 0][slot 1]...   slot = [u64 len][pad][data...]
//
// Either side may create it: O_CREAT|O_EXCL picks the initialiser, the other
// side waits (bounded) for `magic` and then checks that slot size, slot count
// and reliability agree.
#ifndef PSBENCH_SHM_SEGMENT_H
#define PSBENCH_SHM_SEGMENT_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "psbench/driver.h"
#include "psbench/sdk_futex.hpp"
#include "settings.h"

namespace psbshm {

constexpr uint32_t kMagic = 0x314d5350u;  // "PSM1", set last by the initialiser
constexpr uint32_t kLayoutVersion = 1;
constexpr size_t kSlotDataOffset = 16;  // after the u64 length (+ pad)
// The futex words live in a MAP_SHARED segment that several processes map.
constexpr auto kShared = psb::sdk::FutexScope::shared;

struct alignas(64) SegmentHeader {
  std::atomic<uint32_t> magic;  // kMagic once the fields below are valid
  uint32_t layout_version;
  uint64_t slot_size;            // payload capacity of one slot (max_payload)
  uint64_t slot_stride;          // bytes from one slot to the next
  uint64_t total_size;           // bytes of the whole segment
  uint32_t slot_count;           // history depth
  uint32_t modulus;              // head/tail run in [0, modulus), a multiple of slot_count
  uint32_t reliability;          // PSB_BEST_EFFORT or PSB_RELIABLE
  std::atomic<int32_t> writers;  // attached writers (0 or 1)
  std::atomic<int32_t> readers;  // attached readers (0 or 1)

  // Written by the writer. `head` is also the futex word readers sleep on.
  alignas(64) std::atomic<uint32_t> head;
  std::atomic<uint32_t> reader_waiting;  // set by a reader before it sleeps
  std::atomic<uint64_t> drops;           // best_effort samples dropped

  // Written by the reader. `tail` is the futex word a reliable writer sleeps on.
  alignas(64) std::atomic<uint32_t> tail;
  std::atomic<uint32_t> writer_waiting;  // set by a writer before it sleeps
};

// Bytes between slots, and of the whole segment.
uint64_t slot_stride(uint64_t slot_size);
uint64_t segment_size(const Settings &s);

// One side of a topic's ring: the segment created or attached, with this side
// counted in its header (one writer and one reader: a second is refused). The
// destructor uncounts it, unmaps and unlinks (ENOENT ignored: the peer may
// have unlinked first).
class Segment {
 public:
  enum Side { kWriter, kReader };
  // Throws psb::sdk::Error (leaving nothing mapped) if the segment cannot be
  // opened, does not match s, or has this side already.
  Segment(const Settings &s, const char *topic, Side side);
  ~Segment();
  Segment(const Segment &) = delete;
  Segment &operator=(const Segment &) = delete;

  // The ring's geometry, copied out of the header once at attach.
  SegmentHeader *hdr = nullptr;
  unsigned char *slots = nullptr;  // first slot
  uint64_t stride = 0;
  uint64_t slot_size = 0;
  uint32_t count = 0;
  uint32_t modulus = 0;

  // head (written by the writer) and tail (written by the reader) are 32-bit counters
  // running in [0, modulus), where modulus is the largest multiple of count not above 2^31,
  // so counter c always lives in slot c % count and each side can step its slot index
  // alongside its counter (no division on the timed path). used = head - tail (mod
  // modulus) is in [0, count]: equal counters mean empty, used == count means full.
  uint32_t next(uint32_t c) const { return c + 1 == modulus ? 0 : c + 1; }
  bool full(uint32_t head, uint32_t tail) const {
    return (head >= tail ? head - tail : head + (modulus - tail)) >= count;
  }
  uint32_t next_index(uint32_t idx) const { return idx + 1 == count ? 0 : idx + 1; }
  uint64_t *slot_len(uint32_t idx) const {
    return reinterpret_cast<uint64_t *>(slots + stride * idx);
  }
  unsigned char *slot_data(uint32_t idx) const { return slots + stride * idx + kSlotDataOffset; }
  const char *name() const { return name_.c_str(); }

 private:
  void open(const Settings &s, int64_t deadline);  // creates and initialises, or attaches
  void initialise(int fd, const Settings &s);
  void attach(int fd, int64_t deadline);
  void map(int fd, size_t size);
  void check(const Settings &s, int64_t deadline) const;  // initialised, and as s says

  std::string name_;
  size_t map_size_ = 0;
  Side side_;
};

}  // namespace psbshm

#endif
