// Creating, attaching and removing a topic's shared-memory segment. Runs at
// endpoint creation and destruction only, never on the timed path.
#include "segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>

#include "psbench/sdk.hpp"
#include "psbench/sdk_connection.hpp"

namespace psbshm {
namespace {

using psb::sdk::fail;
using psb::sdk::now_ns;

constexpr int64_t kAttachTimeoutNs = 5'000'000'000;  // wait for the initialiser
using Fd = psb::sdk::Owned<int, &close, -1>;

// "/psbench-<run_id>-<topic>"; throws psb::sdk::Error if the name is not usable.
std::string segment_name(const std::string &run_id, const char *topic) {
  if (topic == nullptr || *topic == '\0' || std::strchr(topic, '/') != nullptr)
    fail("topic name '%s' is not usable (empty or contains '/')",
         topic == nullptr ? "(null)" : topic);
  const std::string n = "/psbench-" + run_id + "-" + topic;
  if (n.size() - 1 > NAME_MAX)
    fail("shared memory name for run '%s' topic '%s' is longer than %d characters", run_id.c_str(),
         topic, NAME_MAX);
  return n;
}

}  // namespace

// At most 2^20 slots of 4 MiB (the settings' limits): no overflow.
uint64_t slot_stride(uint64_t slot_size) { return (kSlotDataOffset + slot_size + 63) / 64 * 64; }
uint64_t segment_size(const Settings &s) {
  return sizeof(SegmentHeader) + slot_stride(s.max_payload) * s.depth;
}

Segment::Segment(const Settings &s, const char *topic, Side side)
    : name_(segment_name(s.run_id, topic)), side_(side) {
  const int64_t deadline = now_ns() + kAttachTimeoutNs;
  open(s, deadline);
  try {  // mapped: a failure from here on unmaps it
    check(s, deadline);
    std::atomic<int32_t> &sides = side == kReader ? hdr->readers : hdr->writers;
    if (sides.fetch_add(1, std::memory_order_acq_rel) != 0) {
      sides.fetch_sub(1, std::memory_order_acq_rel);  // the other one's side keeps the name
      fail(
          "topic '%s' already has a %s; the shm driver is one writer, one reader per topic (or "
          "a killed run with this run_id left %s in /dev/shm)",
          topic, side == kReader ? "reader" : "writer", name());
    }
  } catch (...) {
    munmap(hdr, map_size_);
    throw;
  }
  stride = hdr->slot_stride;
  slot_size = hdr->slot_size;
  count = hdr->slot_count;
  modulus = hdr->modulus;
}

Segment::~Segment() {
  (side_ == kReader ? hdr->readers : hdr->writers).fetch_sub(1, std::memory_order_seq_cst);
  // A reliable writer waiting for room sees that nobody reads any more.
  if (side_ == kReader) psb::sdk::futex_wake_all(&hdr->tail, kShared);
  munmap(hdr, map_size_);
  shm_unlink(name());  // ENOENT: the peer unlinked it first
}

void Segment::open(const Settings &s, int64_t deadline) {
  for (;;) {
    Fd fd = shm_open(name(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {  // we created it: we initialise it
      try {
        return initialise(fd, s);
      } catch (...) {
        shm_unlink(name());
        throw;
      }
    }
    if (errno != EEXIST) fail("cannot create shared memory %s: %s", name(), std::strerror(errno));
    fd = shm_open(name(), O_RDWR, 0);
    if (fd >= 0) return attach(fd, deadline);
    // Unlinked between our two shm_open calls: try to create it again.
    if (errno == ENOENT && now_ns() < deadline) continue;
    fail("cannot open shared memory %s: %s", name(), std::strerror(errno));
  }
}

void Segment::map(int fd, size_t size) {
  void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) fail("cannot map %s (%zu bytes): %s", name(), size, std::strerror(errno));
  hdr = static_cast<SegmentHeader *>(m);
  slots = static_cast<unsigned char *>(m) + sizeof(SegmentHeader);
  map_size_ = size;
}

void Segment::initialise(int fd, const Settings &s) {
  const uint64_t size = segment_size(s);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0)
    fail("cannot size shared memory %s to %llu bytes: %s", name(),
         static_cast<unsigned long long>(size), std::strerror(errno));
  // Reserve the pages now: tmpfs would otherwise SIGBUS on first touch when
  // /dev/shm is full. Filesystems without fallocate are left as they are.
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL)
    fail(
        "cannot reserve %llu bytes in /dev/shm for %s (slots %u x slot %llu bytes): %s; enlarge "
        "/dev/shm or lower option slots or size",
        static_cast<unsigned long long>(size), name(), s.depth,
        static_cast<unsigned long long>(slot_stride(s.max_payload)), std::strerror(rc));
  map(fd, size);
  auto *h = new (hdr) SegmentHeader();
  h->layout_version = kLayoutVersion;
  h->slot_size = s.max_payload;
  h->slot_stride = slot_stride(s.max_payload);
  h->total_size = size;
  h->slot_count = s.depth;
  h->modulus = s.depth * (0x80000000u / s.depth);
  h->reliability = s.qos.reliability;
  h->magic.store(kMagic, std::memory_order_release);
}

// The initialiser sizes the file in one ftruncate, and sets magic last.
void Segment::attach(int fd, int64_t deadline) {
  struct stat st;
  if (!psb::sdk::wait_until(std::max<int64_t>(deadline - now_ns(), 0), [&] {
        if (fstat(fd, &st) != 0) fail("cannot stat %s: %s", name(), std::strerror(errno));
        return st.st_size > 0;
      }))
    fail("%s exists but was never sized within 5 s (left by a killed run? remove /dev/shm%s)",
         name(), name());
  const auto size = static_cast<size_t>(st.st_size);
  if (size < sizeof(SegmentHeader))
    fail("%s is %zu bytes, too small to be a psbench segment", name(), size);
  map(fd, size);
}

void Segment::check(const Settings &s, int64_t deadline) const {
  const SegmentHeader *h = hdr;
  if (!psb::sdk::wait_until(std::max<int64_t>(deadline - now_ns(), 0),
                            [h] { return h->magic.load(std::memory_order_acquire) == kMagic; }))
    fail("%s was created but not initialised within 5 s (left by a killed run? remove /dev/shm%s)",
         name(), name());
  struct Field {
    const char *what;
    uint64_t mine, theirs;
  };
  const Field fields[] = {{"layout version", kLayoutVersion, h->layout_version},
                          {"max_payload", s.max_payload, h->slot_size},
                          {"slots (option slots)", s.depth, h->slot_count},
                          {"reliability", s.qos.reliability, h->reliability},
                          {"segment size", map_size_, h->total_size}};
  for (const Field &f : fields) {
    if (f.mine == f.theirs) continue;
    auto text = [&](uint64_t v) {
      if (&f != &fields[3]) return std::to_string(v);
      return std::string(v == PSB_RELIABLE ? "reliable" : "best_effort");
    };
    fail(
        "%s mismatch on %s: this side uses %s, the segment was created with %s; both sides of a "
        "topic must use the same max_payload, slots and reliability",
        f.what, name(), text(f.mine).c_str(), text(f.theirs).c_str());
  }
}

}  // namespace psbshm
