// The pieces of a module without processes: the origin merge, the work draw, the inbox
// between a listener and the role thread. Known answers.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "graph_message.hpp"
#include "module_core.hpp"
#include "module_inbox.hpp"

using namespace psb;

TEST(ModuleMerge, PresentInAnyNewestTheLargestOldestTheSmallest) {
  OriginEntry into[3], a[3], b[3];
  clear_origins(into, 3);
  clear_origins(a, 3);
  clear_origins(b, 3);
  a[0] = {7, 700, 650, 0, 1};
  a[1] = {3, 300, 300, 1, 1};
  b[0] = {5, 500, 400, 0, 1};
  b[2] = {9, 900, 880, 2, 1};
  merge_origins(into, a, 3);
  merge_origins(into, b, 3);
  EXPECT_EQ(into[0].newest_seq, 7u);  // a's newer sample, with its seq
  EXPECT_EQ(into[0].newest_ns, 700);
  EXPECT_EQ(into[0].oldest_ns, 400);  // b's older one
  EXPECT_EQ(into[1].newest_ns, 300);  // present in a only
  EXPECT_EQ(into[1].present, 1u);
  EXPECT_EQ(into[2].newest_seq, 9u);  // present in b only
  EXPECT_EQ(into[2].oldest_ns, 880);
  for (uint32_t j = 0; j < 3; ++j) EXPECT_EQ(into[j].source, j);
  OriginEntry none[3];
  clear_origins(none, 3);
  merge_origins(into, none, 3);  // an absent entry changes nothing
  EXPECT_EQ(into[0].newest_ns, 700);
  EXPECT_EQ(graph_message_size(2), 112u);
}

TEST(ModuleMerge, TheWorkDrawIsTheSameEveryRunAndWithinItsBounds) {
  WorkDraw x(1000, 3000, 4), y(1000, 3000, 4), other(1000, 3000, 5), fixed(250, 250, 4);
  std::set<int64_t> seen;
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = x.next();
    EXPECT_EQ(v, y.next());
    differs |= v != other.next();
    EXPECT_GE(v, 1000);
    EXPECT_LE(v, 3000);
    seen.insert(v);
    EXPECT_EQ(fixed.next(), 250);
  }
  EXPECT_TRUE(differs) << "another --module-id draws another sequence";
  EXPECT_GT(seen.size(), 500u);
}

TEST(ModuleMerge, TheInboxKeepsOrderAndCountsWhatDidNotFit) {
  Inbox box(48);
  uint8_t msg[64];
  for (uint64_t i = 0; i < Inbox::kSlots + 3; ++i) {
    std::memset(msg, int(i & 0xFF), sizeof msg);
    box.push(msg, sizeof msg, int64_t(i));
  }
  EXPECT_EQ(box.overflow(), 3u);
  Inbox::Entry e{};
  for (uint64_t i = 0; i < Inbox::kSlots; ++i) {
    ASSERT_TRUE(box.front(e));
    EXPECT_EQ(e.arrival_ns, int64_t(i));
    EXPECT_EQ(e.len, 64u);                      // the whole message's length
    EXPECT_EQ(e.bytes[47], uint8_t(i & 0xFF));  // its first 48 bytes kept
    box.pop();
  }
  EXPECT_FALSE(box.front(e));
}
