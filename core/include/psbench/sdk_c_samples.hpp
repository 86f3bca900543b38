// idl/psbench.idl's samples in the IDL C language mapping (structs whose sequences have
// _maximum, _length, _buffer and _release), for the drivers whose vendor generates C
// (cyclonedds: idlc; opensplice: idlpp -l c), and how psbench's messages map onto them:
//   bytes:   header fields <- the node's 32-byte header; payload <- the rest.
//   complex: header fields <- the node's 32-byte header; outers: `elements` Outer, each
//            {length = 4, inners = 4 x Inner{info = 16 characters, index = element number}},
//            built once per writer. The element number counts the Inner elements of the
//            sample: 0, 1, 2, ... in order.
// Templates over the generated types: the vendor's allocators and frees stay the driver's.
#ifndef PSBENCH_SDK_C_SAMPLES_HPP
#define PSBENCH_SDK_C_SAMPLES_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <vector>

#include "psbench/sdk_refusals.hpp"

namespace psb::sdk::c_samples {

constexpr uint32_t kInnersPerOuter = 4;
constexpr size_t kInfoLength = 16;

// The generated header struct has the node's header layout (five fields, native byte
// order, no padding), so one copy maps either way.
template <class Header>
void header_from_message(Header *h, const void *message) {
  static_assert(sizeof(Header) == kHeaderSize && offsetof(Header, send_ns) == 8 &&
                offsetof(Header, intended_ns) == 16 && offsetof(Header, writer_id) == 24 &&
                offsetof(Header, flags) == 28);
  std::memcpy(h, message, kHeaderSize);
}
template <class Header>
void header_to_message(void *message, const Header *h) {
  std::memcpy(message, h, kHeaderSize);
}

// A writer's sample header from the node's message of len bytes; throws if it is shorter
// than the header.
template <class Header>
void load_header(Header *h, const void *message, size_t len) {
  if (len < kHeaderSize)
    fail("a message of %zu bytes is shorter than the %zu-byte header", len, kHeaderSize);
  header_from_message(h, message);
}

// A writer's bytes sample for the node's message: its header copied (load_header), its
// payload sequence pointing straight at the rest of the message (_release = false), so
// the only copy on the send side is the middleware's.
template <class Bytes>
void point_at_message(Bytes &b, const void *data, size_t len) {
  using Octet = std::remove_pointer_t<decltype(b.payload._buffer)>;
  load_header(&b.header, data, len);
  const auto n = static_cast<decltype(b.payload._length)>(len - kHeaderSize);
  b.payload._buffer =
      n ? const_cast<Octet *>(static_cast<const Octet *>(data) + kHeaderSize) : nullptr;
  b.payload._length = b.payload._maximum = n;
  b.payload._release = false;
}

// Fills a zeroed complex sample with `elements` outers, allocated with the vendor's
// allocators: outers(n) and inners(n) a sequence buffer of n elements, text(n) a string of
// n characters and the NUL. false when one gives nullptr (out of memory); what was
// allocated belongs to the sample either way (the driver frees it with the sample).
template <class Complex, class Outers, class Inners, class Text>
bool build_complex(Complex *s, uint32_t elements, Outers outers, Inners inners, Text text) {
  s->outers._buffer = outers(elements);
  if (s->outers._buffer == nullptr) return false;
  s->outers._maximum = s->outers._length = elements;
  s->outers._release = true;
  int32_t element = 0;
  for (uint32_t i = 0; i < elements; ++i) {
    auto &outer = s->outers._buffer[i];
    outer.length = kInnersPerOuter;
    outer.inners._buffer = inners(kInnersPerOuter);
    if (outer.inners._buffer == nullptr) return false;
    outer.inners._maximum = outer.inners._length = kInnersPerOuter;
    outer.inners._release = true;
    for (uint32_t j = 0; j < kInnersPerOuter; ++j, ++element) {
      auto &inner = outer.inners._buffer[j];
      inner.index = element;
      inner.info = text(kInfoLength);
      if (inner.info == nullptr) return false;
      std::snprintf(inner.info, kInfoLength + 1, "psbench/%08x", static_cast<unsigned>(element));
    }
  }
  return true;
}

// Throws BadSample unless a received sample has build_complex's shape, saying how it differs.
template <class Complex>
void check_complex_shape(const Complex *s, uint32_t elements) {
  if (s->outers._length != elements)
    bad_sample(
        "complex sample has %u outer elements, expected %u (do both sides use the same "
        "elements=N?)",
        unsigned(s->outers._length), elements);
  for (uint32_t i = 0; i < elements; ++i)
    if (s->outers._buffer[i].inners._length != kInnersPerOuter)
      bad_sample("complex sample: outer element %u has %u inner elements, expected %u", i,
                 unsigned(s->outers._buffer[i].inners._length), kInnersPerOuter);
}

// A writer's sample: with complex, the driver's ComplexSample (a generated psbench_Complex
// `s` it frees, and bool build(elements), e.g. with build_complex) built once, a write
// only setting its header; else the bytes sample, pointed at each message.
template <class Bytes, class ComplexSample>
class SendSample {
 public:
  // Throws if the complex sample cannot be built.
  SendSample(bool complex, uint32_t elements) : complex_(complex) {
    if (complex && !complex_sample_.build(elements))
      fail("out of memory for a complex sample of %u elements", elements);
  }
  bool complex() const { return complex_; }

  // The sample that carries the node's message of len bytes (load_header,
  // point_at_message): &complex_sample().s or &bytes(), as complex() says.
  void *load(const void *data, size_t len) {
    if (!complex_) {
      point_at_message(bytes_, data, len);
      return &bytes_;
    }
    load_header(&complex_sample_.s.header, data, len);
    return &complex_sample_.s;
  }

 private:
  const bool complex_;
  ComplexSample complex_sample_;
  Bytes bytes_{};
};

// A reader's sample and one contiguous buffer for the node, allocated once: a bytes
// sample deserializes straight into the buffer (its payload sequence points into it after
// room for the header, _release = false); a complex sample (the driver's ComplexSample,
// kept across takes: the middleware reuses its sequences and strings) gives only its
// header. Sized one byte more than a message may carry: a payload the middleware had to
// cut or place elsewhere shows as one that does not fit. Zeroed: touched now, not on the
// first take.
template <class Bytes, class ComplexSample>
class ReceiveBuffer {
 public:
  ReceiveBuffer(bool complex, uint32_t elements, uint64_t max_payload)
      : complex_(complex),
        elements_(elements),
        capacity_(max_payload - kHeaderSize),
        buffer_(complex ? kHeaderSize : max_payload + 1) {}
  bool complex() const { return complex_; }

  // What a take fills: the complex sample, or the bytes sample with its payload sequence
  // pointing into the buffer.
  void *next() { return complex_ ? static_cast<void *>(&complex_sample_.s) : bytes(); }
  Bytes *bytes() {
    using Length = decltype(bytes_.payload._maximum);
    bytes_.payload._buffer = buffer_.data() + kHeaderSize;
    bytes_.payload._maximum = static_cast<Length>(capacity_ + 1);
    bytes_.payload._length = 0;
    bytes_.payload._release = false;
    return &bytes_;
  }
  auto *complex_sample() { return &complex_sample_.s; }

  // Whether the last take of bytes() deserialized into the buffer (false: the middleware
  // allocated a payload of its own, the sample did not fit).
  bool in_place() const { return bytes_.payload._buffer == buffer_.data() + kHeaderSize; }

  // After a take of next(): the message in data and len; BadSample if a bytes sample does
  // not fit or a complex one has not build_complex's shape.
  void taken(const void *&data, size_t &len) {
    data = buffer_.data();
    if (complex_) {
      check_complex_shape(&complex_sample_.s, elements_);
      header_to_message(buffer_.data(), &complex_sample_.s.header);
      len = kHeaderSize;
      return;
    }
    if (!in_place() || bytes_.payload._length > capacity_)
      bad_sample(
          "received a message larger than this run's %zu bytes; do both sides use the same "
          "--size?",
          capacity_ + kHeaderSize);
    header_to_message(buffer_.data(), &bytes_.header);
    len = kHeaderSize + bytes_.payload._length;
  }

  Bytes &sample() { return bytes_; }
  size_t capacity() const { return capacity_; }  // bytes after the header a sample may carry

 private:
  using Octet = std::remove_pointer_t<decltype(Bytes{}.payload._buffer)>;
  const bool complex_;
  const uint32_t elements_;
  const size_t capacity_;
  std::vector<Octet> buffer_;
  Bytes bytes_{};
  ComplexSample complex_sample_;
};

}  // namespace psb::sdk::c_samples

#endif  // PSBENCH_SDK_C_SAMPLES_HPP
