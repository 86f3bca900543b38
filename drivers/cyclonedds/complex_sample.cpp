#include <cstdio>

#include <dds/dds.h>

#include "error.h"
#include "samples.h"

namespace psbcyc {

bool build_complex(psbench_Complex *s, uint32_t elements) {
  s->outers._buffer = dds_sequence_psbench_Outer_allocbuf(elements);
  if (s->outers._buffer == nullptr) return false;
  std::memset(s->outers._buffer, 0, elements * sizeof(psbench_Outer));
  s->outers._maximum = s->outers._length = elements;
  s->outers._release = true;
  int32_t element = 0;
  for (uint32_t i = 0; i < elements; ++i) {
    psbench_Outer &outer = s->outers._buffer[i];
    outer.length = kInnersPerOuter;
    outer.inners._buffer = dds_sequence_psbench_Inner_allocbuf(kInnersPerOuter);
    if (outer.inners._buffer == nullptr) return false;
    outer.inners._maximum = outer.inners._length = kInnersPerOuter;
    outer.inners._release = true;
    for (uint32_t j = 0; j < kInnersPerOuter; ++j, ++element) {
      psbench_Inner &inner = outer.inners._buffer[j];
      inner.index = element;
      inner.info = static_cast<char *>(dds_alloc(kInfoLength + 1));
      if (inner.info == nullptr) return false;
      std::snprintf(inner.info, kInfoLength + 1, "psbench/%08x", static_cast<unsigned>(element));
    }
  }
  return true;
}

void free_complex(psbench_Complex *s) { dds_sample_free(s, &psbench_Complex_desc, DDS_FREE_CONTENTS); }

void check_complex_shape(const psbench_Complex *s, uint32_t elements) {
  if (s->outers._length != elements) {
    fail("complex sample has %u outer elements, expected %u (do both sides use the same elements=N?)",
         s->outers._length, elements);
  }
  for (uint32_t i = 0; i < elements; ++i) {
    const psbench_Outer &outer = s->outers._buffer[i];
    if (outer.inners._length != kInnersPerOuter) {
      fail("complex sample: outer element %u has %u inner elements, expected %u", i,
           outer.inners._length, kInnersPerOuter);
    }
  }
}

}  // namespace psbcyc
