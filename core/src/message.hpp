// The header every psbench message starts with, and the optional payload pattern.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace psb {

enum MessageFlags : uint32_t {
  kFlagWarmup = 1u << 0,
  kFlagHandshake = 1u << 1,
  kFlagEnd = 1u << 2,  // seq holds the number of measured messages sent
  kFlagPattern = 1u << 3,
};

struct MessageHeader {
  uint64_t seq;
  int64_t send_ns;
  int64_t intended_ns;
  uint32_t writer_id;
  uint32_t flags;
};
static_assert(sizeof(MessageHeader) == 32, "the header is part of the wire contract");

constexpr size_t kHeaderSize = sizeof(MessageHeader);
constexpr size_t kMaxMessageSize = size_t(4) << 20;

// memcpy keeps this legal for any alignment the middleware hands back.
inline void write_header(void *buf, const MessageHeader &h) { std::memcpy(buf, &h, kHeaderSize); }

inline MessageHeader read_header(const void *buf) {
  MessageHeader h;
  std::memcpy(&h, buf, kHeaderSize);
  return h;
}

// Pattern byte i of the payload (after the header) of message seq: depends on both so
// that a stale, shifted or foreign buffer is caught.
inline uint8_t pattern_byte(uint64_t seq, size_t i) { return uint8_t(seq * 31u + i * 7u + 0x5Au); }

inline void fill_pattern(void *buf, size_t size, uint64_t seq) {
  auto *p = static_cast<uint8_t *>(buf);
  for (size_t i = kHeaderSize; i < size; ++i) p[i] = pattern_byte(seq, i - kHeaderSize);
}

inline bool check_pattern(const void *buf, size_t size, uint64_t seq) {
  auto *p = static_cast<const uint8_t *>(buf);
  for (size_t i = kHeaderSize; i < size; ++i)
    if (p[i] != pattern_byte(seq, i - kHeaderSize)) return false;
  return true;
}

}  // namespace psb
