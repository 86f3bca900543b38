#include "sample_store.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace psb;

TEST(SampleStore, CountsDuplicatesAndReordering) {
  SampleStore s(10);
  EXPECT_EQ(s.record(0, 0, 5), SampleStore::Outcome::recorded);
  EXPECT_EQ(s.record(2, 0, 5), SampleStore::Outcome::recorded);
  EXPECT_EQ(s.record(1, 0, 5), SampleStore::Outcome::recorded);  // late: reordered
  EXPECT_EQ(s.record(2, 0, 5), SampleStore::Outcome::duplicate);
  EXPECT_EQ(s.recorded(), 3u);
  EXPECT_EQ(s.duplicated(), 1u);
  EXPECT_EQ(s.reordered(), 1u);
  EXPECT_EQ(s.seen_span(), 3u);
}

TEST(SampleStore, GapsAreLossesNotRecords) {
  SampleStore s(10);
  s.record(0, 0, 1);
  s.record(5, 0, 1);
  EXPECT_EQ(s.recorded(), 2u);
  EXPECT_EQ(s.seen_span(), 6u);  // 4 lost in between
  auto records = s.collect();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].seq, 5u);
}

TEST(SampleStore, RefusesSequenceNumbersBeyondCapacity) {
  SampleStore s(3);
  EXPECT_EQ(s.record(3, 0, 1), SampleStore::Outcome::out_of_range);
  EXPECT_EQ(s.recorded(), 0u);
}

TEST(SampleStore, WritesTheDocumentedFileFormat) {
  SampleStore s(4);
  s.record(3, 300, 33);
  s.record(1, 100, 11);
  auto path = (std::filesystem::temp_directory_path() / "psbench_store_test.samples").string();
  s.write_file(path, SampleKind::one_way, 12345);
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  std::filesystem::remove(path);
  ASSERT_EQ(bytes.size(), 64u + 2 * 24u);
  EXPECT_EQ(std::memcmp(bytes.data(), "PSBSMP01", 8), 0);
  uint32_t version, record_size, kind;
  uint64_t count;
  int64_t start;
  std::memcpy(&version, &bytes[8], 4);
  std::memcpy(&record_size, &bytes[12], 4);
  std::memcpy(&count, &bytes[16], 8);
  std::memcpy(&kind, &bytes[24], 4);
  std::memcpy(&start, &bytes[32], 8);
  EXPECT_EQ(version, 1u);
  EXPECT_EQ(record_size, 24u);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(kind, 2u);
  EXPECT_EQ(start, 12345);
  SampleRecord first;
  std::memcpy(&first, &bytes[64], 24);
  EXPECT_EQ(first.seq, 1u);  // sequence order, whatever the arrival order
  EXPECT_EQ(first.intended_ns, 100);
  EXPECT_EQ(first.latency_ns, 11);
}
