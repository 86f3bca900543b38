#include "schedule.hpp"

#include <gtest/gtest.h>

using namespace psb;

TEST(OpenLoopSchedule, DueTimesFollowTheRateFromTheStart) {
  OpenLoopSchedule s(1'000'000, 1000.0);  // 1 kHz
  EXPECT_EQ(s.due_ns(0), 1'000'000);
  EXPECT_EQ(s.due_ns(1), 2'000'000);
  EXPECT_EQ(s.due_ns(10), 11'000'000);
}

TEST(OpenLoopSchedule, DoesNotDriftOverLongRuns) {
  // 3 kHz has a period that is not a whole number of ns: the schedule must be computed
  // from the start, not accumulated, or it drifts.
  OpenLoopSchedule s(0, 3000.0);
  EXPECT_EQ(s.due_ns(3'000'000), 1'000'000'000'000);
}

TEST(OpenLoopSchedule, ADelayedSenderDoesNotMoveLaterDueTimes) {
  // The schedule is a pure function of i: a stall while sending message 5 leaves
  // message 6 due at its original time, which is what exposes coordinated omission.
  OpenLoopSchedule s(0, 100.0);
  int64_t due6_before = s.due_ns(6);
  wait_until(now_ns() + 1000, false);
  EXPECT_EQ(s.due_ns(6), due6_before);
  EXPECT_EQ(s.due_ns(6), 60'000'000);
}
