// For a driver's GoogleTest: what a reader received. DistinctSeqs: a reader callback's
// messages by sequence number (the first 4 bytes, as the tests write them), distinct
// and in all. take_one: one message's bytes. report_until_end: a reader child's report
// of what it took.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "driver_under_test.hpp"
#include "psbench/driver.h"

namespace psb_test {

struct DistinctSeqs {
  std::mutex mu;
  std::vector<bool> seen;
  uint32_t distinct = 0, total = 0;
  explicit DistinctSeqs(uint32_t n) : seen(n, false) {}
  // A psb_on_data callback; user is the DistinctSeqs.
  static void on_data(void *user, const void *data, size_t len) {
    auto *r = static_cast<DistinctSeqs *>(user);
    uint32_t seq = UINT32_MAX;
    if (len >= sizeof seq) std::memcpy(&seq, data, sizeof seq);
    std::lock_guard<std::mutex> lock(r->mu);
    ++r->total;
    if (seq < r->seen.size() && !r->seen[seq]) {
      r->seen[seq] = true;
      ++r->distinct;
    }
  }
  uint32_t count() {
    std::lock_guard<std::mutex> lock(mu);
    return distinct;
  }
  // count() once it reached n, or when seconds passed without.
  uint32_t count_within(uint32_t n, int seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (count() < n && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return count();
  }
};

// One message from the driver under test's reader within seconds, each take waiting up
// to timeout_ns (0: a poll); its bytes, copied before the sample is released. Empty when
// none came, or when a take failed (a test failure).
inline std::vector<uint8_t> take_one(psb_reader *reader, int64_t timeout_ns, int seconds = 5) {
  const psb_driver &d = driver_under_test();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    const void *data = nullptr;
    size_t len = 0;
    psb_error err{};
    const int r = d.take(reader, timeout_ns, &data, &len, &err);
    EXPECT_GE(r, 0) << err.message;
    if (r < 0) return {};
    if (r == 1) {
      std::vector<uint8_t> got(static_cast<const uint8_t *>(data),
                               static_cast<const uint8_t *>(data) + len);
      if (d.release != nullptr) d.release(reader);
      return got;
    }
  }
  return {};
}

// A take where nothing was written: no sample, waiting wait_ns, and polling.
inline void expect_nothing_to_take(psb_reader *reader, int64_t wait_ns) {
  const void *data;
  size_t len;
  psb_error err{};
  EXPECT_EQ(driver_under_test().take(reader, wait_ns, &data, &len, &err), 0) << err.message;
  EXPECT_EQ(driver_under_test().take(reader, 0, &data, &len, &err), 0) << err.message;
}

// m made the end marker: flag 4 in the header's flags (bytes 28-31), as the node and
// report_until_end read it.
inline std::vector<uint8_t> as_end_marker(std::vector<uint8_t> m) {
  const uint32_t end = 4;
  std::memcpy(m.data() + 28, &end, sizeof end);
  return m;
}

// Takes from reader until a message with flag 4 (end) or 10 s without any, then prints
// "received N", "last_seq S" (the 8-byte sequence number of the last message before the
// end, when there was one) and the reader's counters as "NAME VALUE", each on a line of
// its own (ChildReport::finish reads them). 0, or 3 if take failed. Every wait is bounded.
inline int report_until_end(const psb_driver &d, psb_reader *reader, psb_error *err) {
  uint64_t received = 0, last_seq = 0;
  auto idle_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < idle_end) {
    const void *data;
    size_t len;
    const int r = d.take(reader, 100'000'000, &data, &len, err);
    if (r < 0) return 3;
    if (r == 0) continue;
    uint32_t flags;
    std::memcpy(&flags, static_cast<const uint8_t *>(data) + 28, sizeof flags);
    if (flags & 4) break;
    ++received;
    std::memcpy(&last_seq, data, sizeof last_seq);
    idle_end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  }
  std::printf("received %llu\n", static_cast<unsigned long long>(received));
  if (received > 0) std::printf("last_seq %llu\n", static_cast<unsigned long long>(last_seq));
  if (d.reader_counters)
    d.reader_counters(
        reader,
        [](void *, const char *name, uint64_t value) {
          std::printf("%s %llu\n", name, static_cast<unsigned long long>(value));
        },
        nullptr);
  return 0;
}

}  // namespace psb_test
