// For a driver's GoogleTest: what a reader callback received, by sequence number (the
// first 4 bytes of each message, as the tests write them): how many distinct ones, and
// how many messages in all (duplicates included).
#pragma once
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

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
};

}  // namespace psb_test
