// The two rules the stage's correctness rests on, without a kernel queue: release times
// keep order and stay within [D - J, D + J] of arrival (clamped at 0) unless order holds
// them back, and the ring is a FIFO that wraps.
#include <gtest/gtest.h>

#include <cstdint>

#include "hold_ring.hpp"
#include "release_clock.hpp"

using netdelay::Held;
using netdelay::HoldRing;
using netdelay::ReleaseClock;

TEST(ReleaseClock, WithoutJitterReleaseIsArrivalPlusDelay) {
  ReleaseClock clock(100, 0, 1);
  EXPECT_EQ(clock.release_for(1'000'000), 1'100'000);
  EXPECT_EQ(clock.release_for(1'000'500), 1'100'500);
}

TEST(ReleaseClock, JitterNeverReordersAndStaysInRange) {
  // Arrivals 1 us apart under +-500 us jitter: unordered draws would cross all the time.
  ReleaseClock clock(1000, 500, 7);
  int64_t previous = 0;
  int held_back = 0;
  for (int64_t i = 0; i < 10000; ++i) {
    int64_t arrival = 1'000'000'000 + i * 1000;
    int64_t release = clock.release_for(arrival);
    EXPECT_GE(release, previous);
    EXPECT_GE(release, arrival + 500'000);                        // D - J
    EXPECT_LE(release, std::max(previous, arrival + 1'500'000));  // D + J, or held back
    if (release == previous) ++held_back;
    previous = release;
  }
  EXPECT_GT(held_back, 0);  // the order rule did act
}

TEST(ReleaseClock, AddedDelayIsClampedAtZero) {
  ReleaseClock clock(10, 1000, 3);  // J > D: draws below -D must not release early
  for (int64_t i = 0; i < 1000; ++i) {
    int64_t arrival = 5'000'000 + i * 5'000'000;  // far apart: order never binds
    EXPECT_GE(clock.release_for(arrival), arrival);
  }
}

TEST(ReleaseClock, SameSeedSameJitter) {
  ReleaseClock a(1000, 500, 42), b(1000, 500, 42);
  for (int64_t i = 0; i < 100; ++i) {
    int64_t arrival = i * 10'000'000;
    EXPECT_EQ(a.release_for(arrival), b.release_for(arrival));
  }
}

TEST(HoldRing, IsAFifoThatWrapsAndKnowsWhenFull) {
  HoldRing ring(3);
  EXPECT_TRUE(ring.empty());
  for (uint32_t round = 0; round < 5; ++round) {
    for (uint32_t k = 0; k < 3; ++k) ring.push(Held{round * 3 + k, 0, 0});
    EXPECT_TRUE(ring.full());
    for (uint32_t k = 0; k < 3; ++k) {
      EXPECT_EQ(ring.front().id, round * 3 + k);
      ring.pop();
    }
    EXPECT_TRUE(ring.empty());
    ring.push(Held{99, 0, 0});  // shifts the head so the next round wraps
    ring.pop();
  }
}
