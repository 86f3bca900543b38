// The node's messages mapped to and from the generated psbench types. One Sample
// per endpoint, built (and its memory reserved) when the endpoint is created, so
// that the timed path only copies.
#ifndef PSBENCH_FASTDDS_SAMPLES_H
#define PSBENCH_FASTDDS_SAMPLES_H

#include <cstddef>
#include <cstdint>
#include <memory>

#include "settings.h"

namespace psbfastdds {

class Sample {
 public:
  virtual ~Sample() = default;
  // The generated object the DataWriter serializes / the DataReader fills.
  virtual void *data() = 0;
  // Writer: the node's message (32-byte header, then the rest) into the sample; throws
  // psb::sdk::Error if it does not fit.
  virtual void load(const void *message, size_t len) = 0;
  // Reader: the received sample back into one message at out (capacity bytes).
  // Returns its length; throws psb::sdk::Error if the sample is not what was expected.
  virtual size_t store(uint8_t *out, size_t capacity) const = 0;
};

// The sample of s's type. bytes: header fields + payload octets, the payload vector
// reserved to hold max_payload - 32 bytes. complex: header fields + `elements` Outer of 4
// Inner each; a writer's sample is built in full once, a reader's is shaped alike so
// deserializing reuses its memory.
std::unique_ptr<Sample> make_sample(const Settings &s);

}  // namespace psbfastdds

#endif
