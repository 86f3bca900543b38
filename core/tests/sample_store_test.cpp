#include "sample_store.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

using namespace psb;

namespace {
SampleRecord rec(uint64_t seq, int64_t latency = 1, uint32_t flags = 0) {
  return SampleRecord{seq, int64_t(seq) * 10, latency, int64_t(seq) * 10 + 1, flags, 0};
}
}  // namespace

TEST(SampleStore, CountsDuplicatesAndReordering) {
  SampleStore s(10);
  EXPECT_EQ(s.record(rec(0)), SampleStore::Outcome::recorded);
  EXPECT_EQ(s.record(rec(2)), SampleStore::Outcome::recorded);
  EXPECT_EQ(s.record(rec(1)), SampleStore::Outcome::recorded);  // late: reordered
  EXPECT_EQ(s.record(rec(2)), SampleStore::Outcome::duplicate);
  EXPECT_EQ(s.recorded(), 3u);
  EXPECT_EQ(s.duplicated(), 1u);
  EXPECT_EQ(s.reordered(), 1u);
  EXPECT_EQ(s.distinct(), 3u);
}

// The flaw this store replaced: indexed by sequence number, a store of 100 kept only
// arrivals with seq < 100, so after losses it stopped recording long before it was full.
TEST(SampleStore, KeepsTheFirstArrivalsWhateverTheirSequenceNumbers) {
  SampleStore s(100);
  for (uint64_t seq = 0; seq < 1000; seq += 7)
    s.record(rec(seq));  // 143 arrivals, most lost between
  EXPECT_EQ(s.recorded(), 100u);
  EXPECT_EQ(s.beyond_capacity(), 43u);
  EXPECT_EQ(s.distinct(), 143u);
  EXPECT_EQ(s.begin()[99].seq, 99u * 7);  // arrival order, with their numbers
  EXPECT_EQ(s.last()->seq, 693u);
}

TEST(SampleStore, DuplicatesPastCapacityAreStillDuplicates) {
  SampleStore s(2);
  s.record(rec(0));
  s.record(rec(1));
  EXPECT_EQ(s.record(rec(5)), SampleStore::Outcome::beyond_capacity);
  EXPECT_EQ(s.record(rec(5)), SampleStore::Outcome::duplicate);
  EXPECT_EQ(s.record(rec(0)), SampleStore::Outcome::duplicate);
  EXPECT_EQ(s.distinct(), 3u);
  EXPECT_EQ(s.duplicated(), 2u);
}

TEST(SampleStore, CountsLateRecords) {
  SampleStore s(4);
  s.record(rec(0));
  s.record(rec(1, 99, kRecordLate));
  EXPECT_EQ(s.late(), 1u);
  EXPECT_EQ(s.recorded(), 2u);
}

// Against an independent reference (a std::set of every number seen) on a random
// stream with duplicates and reordering, across the bit window's wrap.
TEST(SeqWindow, AgreesWithASetOnRandomStreams) {
  std::mt19937_64 rng(7);
  SeqWindow w;
  std::set<uint64_t> seen;
  uint64_t next = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t seq;
    switch (rng() % 4) {
      case 0:
        seq = next > 50 ? next - 1 - rng() % 50 : next;
        break;  // reordered or duplicate
      case 1:
        next += 1 + rng() % 1000;
        seq = next;
        break;  // a gap
      default:
        seq = next++;
        break;
    }
    auto got = w.mark(seq);
    bool dup = !seen.insert(seq).second;
    ASSERT_EQ(got, dup ? SeqWindow::Seen::duplicate : SeqWindow::Seen::first) << "seq " << seq;
  }
}

TEST(SeqWindow, NumbersOlderThanTheWindowAreCountedAsUnchecked) {
  SeqWindow w;
  w.mark(5);
  w.mark(5 + SeqWindow::kWindow);
  EXPECT_EQ(w.mark(5), SeqWindow::Seen::too_old);
  EXPECT_EQ(w.mark(6), SeqWindow::Seen::first);  // inside the window, never seen
  // A jump of more than a window forgets everything before it.
  w.mark(10 * SeqWindow::kWindow);
  EXPECT_EQ(w.mark(10 * SeqWindow::kWindow - 1), SeqWindow::Seen::first);
}

TEST(SampleStore, WritesTheDocumentedFileFormat) {
  SampleStore s(4);
  s.record(SampleRecord{3, 300, 33, 301, 0, 2});
  s.record(SampleRecord{1, 100, 11, 104, kRecordLate, 2});
  auto path = (std::filesystem::temp_directory_path() / "psbench_store_test.samples").string();
  s.write_file(path, SampleKind::one_way, 12345);
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  std::filesystem::remove(path);
  ASSERT_EQ(bytes.size(), 64u + 2 * 40u);
  EXPECT_EQ(std::memcmp(bytes.data(), "PSBSMP01", 8), 0);
  uint32_t version, record_size, kind;
  uint64_t count;
  int64_t start;
  std::memcpy(&version, &bytes[8], 4);
  std::memcpy(&record_size, &bytes[12], 4);
  std::memcpy(&count, &bytes[16], 8);
  std::memcpy(&kind, &bytes[24], 4);
  std::memcpy(&start, &bytes[32], 8);
  EXPECT_EQ(version, 2u);
  EXPECT_EQ(record_size, 40u);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(kind, 2u);
  EXPECT_EQ(start, 12345);
  // Arrival order, each field at its documented offset.
  uint64_t seq;
  int64_t intended, latency, send;
  uint32_t flags, writer;
  const char *second = &bytes[64 + 40];
  std::memcpy(&seq, second, 8);
  std::memcpy(&intended, second + 8, 8);
  std::memcpy(&latency, second + 16, 8);
  std::memcpy(&send, second + 24, 8);
  std::memcpy(&flags, second + 32, 4);
  std::memcpy(&writer, second + 36, 4);
  EXPECT_EQ(seq, 1u);
  EXPECT_EQ(intended, 100);
  EXPECT_EQ(latency, 11);
  EXPECT_EQ(send, 104);
  EXPECT_EQ(flags, kRecordLate);
  EXPECT_EQ(writer, 2u);
}
