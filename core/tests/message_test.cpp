#include "message.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace psb;

TEST(Message, HeaderRoundTripsThroughAnUnalignedBuffer) {
  std::vector<uint8_t> buf(kHeaderSize + 1);
  MessageHeader h{42, 1000, 900, 7, kFlagWarmup | kFlagPattern};
  write_header(buf.data() + 1, h);
  MessageHeader back = read_header(buf.data() + 1);
  EXPECT_EQ(back.seq, 42u);
  EXPECT_EQ(back.send_ns, 1000);
  EXPECT_EQ(back.intended_ns, 900);
  EXPECT_EQ(back.writer_id, 7u);
  EXPECT_EQ(back.flags, kFlagWarmup | kFlagPattern);
}

TEST(Message, HeaderFieldsSitAtTheDocumentedOffsets) {
  std::vector<uint8_t> buf(kHeaderSize);
  write_header(buf.data(), MessageHeader{0x0102030405060708ull, 0, 0, 0xAABBCCDDu, 0x11223344u});
  EXPECT_EQ(buf[0], 0x08);   // seq, little-endian, offset 0
  EXPECT_EQ(buf[24], 0xDD);  // writer_id at offset 24
  EXPECT_EQ(buf[28], 0x44);  // flags at offset 28
}

TEST(Message, PatternDetectsACorruptedByte) {
  std::vector<uint8_t> buf(4096);
  fill_pattern(buf.data(), buf.size(), 5);
  EXPECT_TRUE(check_pattern(buf.data(), buf.size(), 5));
  buf[3000] ^= 0x01;
  EXPECT_FALSE(check_pattern(buf.data(), buf.size(), 5));
}

TEST(Message, PatternDetectsAStaleBufferFromAnotherSequence) {
  std::vector<uint8_t> buf(256);
  fill_pattern(buf.data(), buf.size(), 5);
  EXPECT_FALSE(check_pattern(buf.data(), buf.size(), 6));
}

TEST(Message, HeaderOnlyMessageHasNoPayloadToCheck) {
  std::vector<uint8_t> buf(kHeaderSize, 0xFF);
  fill_pattern(buf.data(), buf.size(), 1);
  EXPECT_TRUE(check_pattern(buf.data(), buf.size(), 99));
  EXPECT_EQ(buf[kHeaderSize - 1], 0xFF);  // the header is left alone
}
