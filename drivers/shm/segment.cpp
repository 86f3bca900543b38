// Creating, attaching and removing a topic's shared-memory segment. Runs at
// endpoint creation and destruction only, never on the timed path.
#include "segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <new>

#include "futex.h"
#include "psbench/sdk.hpp"

namespace psbshm {
namespace {

using psb::sdk::fail;

constexpr int64_t kAttachTimeoutNs = 5'000'000'000;  // wait for the initialiser
constexpr useconds_t kAttachPollUs = 100;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

const char *reliability_name(uint32_t r) { return r == PSB_RELIABLE ? "reliable" : "best_effort"; }

void initialise(int fd, const std::string &name, const SegmentParams &p, Segment *out) {
  const uint64_t size = segment_size(p);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    fail("cannot size shared memory %s to %llu bytes: %s", name.c_str(),
         static_cast<unsigned long long>(size), std::strerror(errno));
  }
  // Reserve the pages now: tmpfs would otherwise SIGBUS on first touch when
  // /dev/shm is full. Filesystems without fallocate are left as they are.
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    fail(
        "cannot reserve %llu bytes in /dev/shm for %s (slots "
        "%u x slot %llu bytes): %s; enlarge /dev/shm or lower "
        "option slots or size",
        static_cast<unsigned long long>(size), name.c_str(), p.slot_count,
        static_cast<unsigned long long>(slot_stride(p.slot_size)), std::strerror(rc));
  }
  void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) {
    fail("cannot map %s (%llu bytes): %s", name.c_str(), static_cast<unsigned long long>(size),
         std::strerror(errno));
  }
  auto *h = new (m) SegmentHeader();
  h->layout_version = kLayoutVersion;
  h->slot_size = p.slot_size;
  h->slot_stride = slot_stride(p.slot_size);
  h->total_size = size;
  h->slot_count = p.slot_count;
  h->modulus = p.slot_count * (0x80000000u / p.slot_count);
  h->reliability = p.reliability;
  h->magic.store(kMagic, std::memory_order_release);
  out->hdr = h;
  out->slots = static_cast<unsigned char *>(m) + sizeof(SegmentHeader);
  out->map_size = size;
}

void attach(int fd, const std::string &name, const SegmentParams &p, int64_t deadline,
            Segment *out) {
  struct stat st;
  for (;;) {  // the initialiser sizes the file in one ftruncate
    if (fstat(fd, &st) != 0) {
      fail("cannot stat %s: %s", name.c_str(), std::strerror(errno));
    }
    if (st.st_size > 0) break;
    if (now_ns() > deadline) {
      fail(
          "%s exists but was never sized within 5 s (left by a "
          "killed run? remove /dev/shm%s)",
          name.c_str(), name.c_str());
    }
    usleep(kAttachPollUs);
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size < sizeof(SegmentHeader)) {
    fail("%s is %zu bytes, too small to be a psbench segment", name.c_str(), size);
  }
  void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (m == MAP_FAILED) {
    fail("cannot map %s (%zu bytes): %s", name.c_str(), size, std::strerror(errno));
  }
  auto *h = static_cast<SegmentHeader *>(m);
  while (h->magic.load(std::memory_order_acquire) != kMagic) {
    if (now_ns() > deadline) {
      munmap(m, size);
      fail(
          "%s was created but not initialised within 5 s (left by a "
          "killed run? remove /dev/shm%s)",
          name.c_str(), name.c_str());
    }
    usleep(kAttachPollUs);
  }
  const char *what = nullptr;
  char mine[64], theirs[64];
  if (h->layout_version != kLayoutVersion) {
    what = "layout version";
    snprintf(mine, sizeof mine, "%u", kLayoutVersion);
    snprintf(theirs, sizeof theirs, "%u", h->layout_version);
  } else if (h->slot_size != p.slot_size) {
    what = "max_payload";
    snprintf(mine, sizeof mine, "%llu", static_cast<unsigned long long>(p.slot_size));
    snprintf(theirs, sizeof theirs, "%llu", static_cast<unsigned long long>(h->slot_size));
  } else if (h->slot_count != p.slot_count) {
    what = "slots (option slots)";
    snprintf(mine, sizeof mine, "%u", p.slot_count);
    snprintf(theirs, sizeof theirs, "%u", h->slot_count);
  } else if (h->reliability != p.reliability) {
    what = "reliability";
    snprintf(mine, sizeof mine, "%s", reliability_name(p.reliability));
    snprintf(theirs, sizeof theirs, "%s", reliability_name(h->reliability));
  } else if (h->total_size != size) {
    what = "segment size";
    snprintf(mine, sizeof mine, "%zu", size);
    snprintf(theirs, sizeof theirs, "%llu", static_cast<unsigned long long>(h->total_size));
  }
  if (what != nullptr) {
    munmap(m, size);
    fail(
        "%s mismatch on %s: this side uses %s, the segment was "
        "created with %s; both sides of a topic must use the same "
        "max_payload, slots and reliability",
        what, name.c_str(), mine, theirs);
  }
  out->hdr = h;
  out->slots = static_cast<unsigned char *>(m) + sizeof(SegmentHeader);
  out->map_size = size;
}

}  // namespace

uint64_t slot_stride(uint64_t slot_size) { return align_up(kSlotDataOffset + slot_size, 64); }

uint64_t segment_size(const SegmentParams &p) {
  if (p.slot_count == 0 || p.slot_size > (uint64_t{1} << 48)) return 0;
  const uint64_t stride = slot_stride(p.slot_size);
  if (p.slot_count > (UINT64_MAX - sizeof(SegmentHeader)) / stride) return 0;
  return sizeof(SegmentHeader) + stride * p.slot_count;
}

std::string segment_name(const std::string &run_id, const char *topic) {
  if (topic == nullptr || *topic == '\0' || std::strchr(topic, '/') != nullptr) {
    fail("topic name '%s' is not usable (empty or contains '/')",
         topic == nullptr ? "(null)" : topic);
  }
  std::string n = kNamePrefix;
  n += run_id;
  n += '-';
  n += topic;
  if (n.size() - 1 > NAME_MAX) {
    fail(
        "shared memory name for run '%s' topic '%s' is longer than "
        "%d characters",
        run_id.c_str(), topic, NAME_MAX);
  }
  return n;
}

void segment_open(const std::string &name, const SegmentParams &p, Segment *out) {
  const int64_t deadline = now_ns() + kAttachTimeoutNs;
  for (;;) {
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {  // we created it: we initialise it
      try {
        initialise(fd, name, p, out);
      } catch (...) {
        close(fd);
        shm_unlink(name.c_str());
        throw;
      }
      close(fd);
      out->name = name;
      return;
    }
    if (errno != EEXIST) {
      fail("cannot create shared memory %s: %s", name.c_str(), std::strerror(errno));
    }
    fd = shm_open(name.c_str(), O_RDWR, 0);
    if (fd < 0) {
      // Unlinked between our two shm_open calls: try to create it again.
      if (errno == ENOENT && now_ns() < deadline) continue;
      fail("cannot open shared memory %s: %s", name.c_str(), std::strerror(errno));
    }
    try {
      attach(fd, name, p, deadline, out);
    } catch (...) {
      close(fd);
      throw;
    }
    close(fd);
    out->name = name;
    return;
  }
}

void segment_close(Segment *seg) {
  if (seg->hdr != nullptr) munmap(seg->hdr, seg->map_size);
  if (!seg->name.empty()) shm_unlink(seg->name.c_str());  // ENOENT: the peer unlinked it first
  seg->hdr = nullptr;
  seg->slots = nullptr;
  seg->map_size = 0;
  seg->name.clear();
}

}  // namespace psbshm
