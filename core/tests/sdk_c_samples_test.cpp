// psbench/sdk_c_samples.hpp on structs laid out as the IDL C mapping of idl/psbench.idl
// (what Cyclone's idlc and OpenSplice's idlpp -l c generate), with malloc as allocator:
// the messages a writer's sample carries and a reader's buffer hands back, byte for byte.
#include "psbench/sdk_c_samples.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "message.hpp"

namespace {

namespace samples = psb::sdk::c_samples;

using psb::MessageHeader;  // the node's; the generated header struct has its layout
struct OctetSeq {
  uint32_t _maximum, _length;
  uint8_t *_buffer;
  bool _release;
};
struct Bytes {
  MessageHeader header;
  OctetSeq payload;
};
struct Inner {
  char *info;
  int32_t index;
};
struct InnerSeq {
  uint32_t _maximum, _length;
  Inner *_buffer;
  bool _release;
};
struct Outer {
  int32_t length;
  InnerSeq inners;
};
struct OuterSeq {
  uint32_t _maximum, _length;
  Outer *_buffer;
  bool _release;
};
struct Complex {
  MessageHeader header;
  OuterSeq outers;
};

// A complex sample freed with it; `budget` allocations succeed, the next fails.
struct ComplexSample {
  Complex s{};
  int budget = 1000;
  ~ComplexSample() {
    for (uint32_t i = 0; s.outers._buffer != nullptr && i < s.outers._length; ++i) {
      for (uint32_t j = 0; s.outers._buffer[i].inners._buffer != nullptr && j < 4; ++j)
        std::free(s.outers._buffer[i].inners._buffer[j].info);
      std::free(s.outers._buffer[i].inners._buffer);
    }
    std::free(s.outers._buffer);
  }
  bool build(uint32_t elements) {
    auto give = [this](size_t bytes) { return budget-- > 0 ? std::calloc(1, bytes) : nullptr; };
    return samples::build_complex(
        &s, elements, [&](uint32_t n) { return static_cast<Outer *>(give(n * sizeof(Outer))); },
        [&](uint32_t n) { return static_cast<Inner *>(give(n * sizeof(Inner))); },
        [&](size_t n) { return static_cast<char *>(give(n + 1)); });
  }
};

// A message of len bytes: header seq 7, writer 3, then bytes 0, 1, 2, ... (mod 251).
std::vector<uint8_t> message(size_t len) {
  std::vector<uint8_t> m(len);
  const MessageHeader h{7, 100, 90, 3, 1};
  std::memcpy(m.data(), &h, sizeof h);
  for (size_t i = psb::sdk::kHeaderSize; i < len; ++i) m[i] = uint8_t((i - 32) % 251);
  return m;
}

TEST(SdkCSamples, ABytesSamplePointsAtTheMessageWithoutCopyingItsPayload) {
  const std::vector<uint8_t> m = message(100);
  samples::SendSample<Bytes, ComplexSample> send(false, 0);
  auto *b = static_cast<Bytes *>(send.load(m.data(), m.size()));
  EXPECT_EQ(b->header.seq, 7u);
  EXPECT_EQ(b->header.writer_id, 3u);
  EXPECT_EQ(b->payload._buffer, m.data() + 32);
  EXPECT_EQ(b->payload._length, 68u);
  EXPECT_EQ(b->payload._maximum, 68u);
  EXPECT_FALSE(b->payload._release);
  b = static_cast<Bytes *>(send.load(m.data(), 32));  // the header alone: no payload
  EXPECT_EQ(b->payload._buffer, nullptr);
  EXPECT_EQ(b->payload._length, 0u);
}

TEST(SdkCSamples, AMessageShorterThanTheHeaderIsRefused) {
  const std::vector<uint8_t> m = message(32);
  samples::SendSample<Bytes, ComplexSample> bytes(false, 0), complex(true, 2);
  try {
    bytes.load(m.data(), 31);
    FAIL() << "no error";
  } catch (const psb::sdk::Error &e) {
    EXPECT_STREQ(e.what(), "a message of 31 bytes is shorter than the 32-byte header");
  }
  EXPECT_THROW(complex.load(m.data(), 10), psb::sdk::Error);
}

TEST(SdkCSamples, AComplexSampleHasFourInnersPerOuterNumberedInOrder) {
  samples::SendSample<Bytes, ComplexSample> send(true, 3);
  const std::vector<uint8_t> m = message(32);
  auto *c = static_cast<Complex *>(send.load(m.data(), m.size()));
  EXPECT_EQ(c->header.seq, 7u);
  ASSERT_EQ(c->outers._length, 3u);
  EXPECT_TRUE(c->outers._release);
  for (uint32_t i = 0; i < 3; ++i) {
    const Outer &o = c->outers._buffer[i];
    EXPECT_EQ(o.length, 4);
    ASSERT_EQ(o.inners._length, 4u);
    for (uint32_t j = 0; j < 4; ++j) EXPECT_EQ(o.inners._buffer[j].index, int32_t(i * 4 + j));
  }
  EXPECT_STREQ(c->outers._buffer[2].inners._buffer[3].info, "psbench/0000000b");
  EXPECT_NO_THROW(samples::check_complex_shape(c, 3));
  EXPECT_THROW(samples::check_complex_shape(c, 4), psb::sdk::BadSample);
  c->outers._buffer[1].inners._length = 3;
  try {
    samples::check_complex_shape(c, 3);
    FAIL() << "no error";
  } catch (const psb::sdk::BadSample &e) {
    EXPECT_STREQ(e.what(), "complex sample: outer element 1 has 3 inner elements, expected 4");
  }
  c->outers._buffer[1].inners._length = 4;  // as built, for the destructor
}

TEST(SdkCSamples, AnAllocationThatFailsMakesTheComplexSampleFail) {
  for (int budget : {0, 1, 2}) {  // the outers, the first inners, the first string
    ComplexSample c;
    c.budget = budget;
    EXPECT_FALSE(c.build(2)) << budget;
  }
  ComplexSample c;
  EXPECT_TRUE(c.build(2));
}

TEST(SdkCSamples, TheReaderBufferHandsBackWhatWasDeserializedIntoIt) {
  samples::ReceiveBuffer<Bytes, ComplexSample> buffer(false, 0, 64);
  EXPECT_EQ(buffer.capacity(), 32u);
  auto *b = static_cast<Bytes *>(buffer.next());
  ASSERT_NE(b->payload._buffer, nullptr);
  EXPECT_EQ(b->payload._maximum, 33u);  // one more than a message may carry
  EXPECT_FALSE(b->payload._release);
  // What a middleware's take does: the header into the sample, the payload into its buffer.
  const std::vector<uint8_t> m = message(50);
  std::memcpy(&b->header, m.data(), 32);
  std::memcpy(b->payload._buffer, m.data() + 32, 18);
  b->payload._length = 18;
  const void *data = nullptr;
  size_t len = 0;
  buffer.taken(data, len);
  ASSERT_EQ(len, 50u);
  EXPECT_EQ(std::memcmp(data, m.data(), 50), 0);
}

TEST(SdkCSamples, TheReaderBufferRefusesASampleThatDidNotFit) {
  samples::ReceiveBuffer<Bytes, ComplexSample> buffer(false, 0, 64);
  const void *data = nullptr;
  size_t len = 0;
  buffer.bytes()->payload._length = 33;  // one byte over the run's 64
  try {
    buffer.taken(data, len);
    FAIL() << "no error";
  } catch (const psb::sdk::BadSample &e) {
    EXPECT_EQ(std::string(e.what()),
              "received a message larger than this run's 64 bytes; do both sides use the same "
              "--size?");
  }
  uint8_t elsewhere[8];
  Bytes *b = buffer.bytes();
  EXPECT_TRUE(buffer.in_place());
  b->payload._buffer = elsewhere, b->payload._length = 8;  // a payload the middleware placed
  EXPECT_FALSE(buffer.in_place());
  EXPECT_THROW(buffer.taken(data, len), psb::sdk::BadSample);
}

TEST(SdkCSamples, AComplexReaderHandsBackTheHeaderAlone) {
  samples::ReceiveBuffer<Bytes, ComplexSample> buffer(true, 2, 32);
  ASSERT_TRUE(buffer.complex());
  auto *c = static_cast<Complex *>(buffer.next());
  EXPECT_EQ(c, buffer.complex_sample());
  ComplexSample sent;
  ASSERT_TRUE(sent.build(2));
  const std::vector<uint8_t> m = message(32);
  std::memcpy(&sent.s.header, m.data(), 32);
  std::swap(c->outers, sent.s.outers);  // deserialized: the sample as sent
  std::memcpy(&c->header, m.data(), 32);
  const void *data = nullptr;
  size_t len = 0;
  buffer.taken(data, len);
  ASSERT_EQ(len, 32u);
  EXPECT_EQ(std::memcmp(data, m.data(), 32), 0);
  samples::ReceiveBuffer<Bytes, ComplexSample> three(true, 3, 32);
  std::swap(three.complex_sample()->outers, c->outers);
  EXPECT_THROW(three.taken(data, len), psb::sdk::BadSample);
}

}  // namespace
