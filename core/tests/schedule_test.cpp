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
  wait_until(now_ns() + 1000, SendWait::hybrid, 100'000);
  EXPECT_EQ(s.due_ns(6), due6_before);
  EXPECT_EQ(s.due_ns(6), 60'000'000);
}

TEST(ScheduleCounts, CountsWritesMoreThanOnePeriodLateAndWhatWasNeverWritten) {
  ScheduleCounts c;
  c.open_loop = true;
  c.period_ns = 1000;
  c.due = 5;
  for (int64_t lateness : {0, 999, 1000, 1001, 50'000}) c.on_write(lateness);
  EXPECT_EQ(c.attempted, 5u);
  EXPECT_EQ(c.behind, 2u);  // 1001 and 50000: over one period
  EXPECT_EQ(c.max_lateness_ns, 50'000);
  EXPECT_EQ(c.not_sent(), 0u);
  c.due = 8;
  EXPECT_EQ(c.not_sent(), 3u);
}
