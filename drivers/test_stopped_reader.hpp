// For a driver's GoogleTest: a reader child (ChildReport) stopped with SIGSTOP while its
// writer wrote `written` messages, then resumed and ended by the end marker, and what it
// received. write_end() writes the end marker (true when it did); drain() is the
// writer's drain (1: drained).
#pragma once
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <thread>

#include "test_process.hpp"

namespace psb_test {

// Reliable keep_last:3: the writer overwrote what was unacknowledged and never waited,
// so the reader gets the newest (the last one written is among them) and under half of
// the rest. Were the depth ignored (keep_all) it would get them all; were the oldest
// kept, the last would be missing.
template <class WriteEnd, class Drain>
void expect_the_newest_after_keep_last(ChildReport &child, uint64_t written, WriteEnd write_end,
                                       Drain drain) {
  ASSERT_EQ(kill(child.pid, SIGCONT), 0);
  ASSERT_TRUE(write_end());
  EXPECT_EQ(drain(), 1);
  auto got = child.finish();
  EXPECT_EQ(got["exit"], 0u);
  EXPECT_EQ(got["last_seq"], written - 1);
  EXPECT_LT(got["received"], written / 2);
  std::printf("reliable keep_last:3 into a stopped reader: received %llu of %llu\n",
              (unsigned long long)got["received"], (unsigned long long)written + 1);
}

// Best effort: the reader's socket buffer overflowed and the kernel dropped the rest. The
// end marker goes three times, 300 ms apart (it may be dropped itself). The reader's
// report, which the caller checks for the middleware's counters of what it missed.
template <class WriteEnd>
std::map<std::string, uint64_t> best_effort_report(ChildReport &child, uint64_t written,
                                                   WriteEnd write_end) {
  EXPECT_EQ(kill(child.pid, SIGCONT), 0);
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(write_end());
  }
  auto got = child.finish();
  EXPECT_EQ(got["exit"], 0u);
  EXPECT_LT(got["received"], written);
  std::printf(
      "best effort into a stopped reader: received %llu, sample_lost %llu, "
      "sample_rejected %llu of %llu\n",
      (unsigned long long)got["received"], (unsigned long long)got["sample_lost"],
      (unsigned long long)got["sample_rejected"], (unsigned long long)written);
  return got;
}

}  // namespace psb_test
