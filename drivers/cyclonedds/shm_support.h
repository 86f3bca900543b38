// What Cyclone's iceoryx shared-memory path (transport shm) needs and allows.
#pragma once

#include <cstdint>

namespace psbcyc {

// Whether iceoryx's RouDi daemon runs on this host: without it Cyclone would wait for it.
bool roudi_running();

// The deepest transient_local history an iceoryx publisher keeps (iceoryx's build
// setting, asked from the library). Cyclone 0.10.2 silently falls back to the network
// for deeper ones.
uint64_t iox_max_publisher_history();

// The largest serialized sample (CDR, 4-byte encapsulation header included) that fits
// the largest chunk of the mempools iox-roudi sets up without a configuration file
// (4 MiB of payload), after Cyclone's own header in the same chunk. Asking iceoryx for
// a larger chunk aborts the process, so check() refuses such runs. Found by experiment
// with iceoryx 2.0.3 and Cyclone 0.10.2: the largest bytes message that passes is
// 4194236 bytes (see README).
constexpr uint64_t kShmMaxCdrSize = 4194236 + 8;

// The serialized size of the run's largest sample: bytes, a message of N bytes is
// encapsulation 4 + header 32 + sequence length 4 + N - 32; complex, encapsulation 4 +
// header 32 + sequence length 4 + per Outer (length 4 + sequence length 4 + 4 Inner of
// string length 4 + 17 characters with NUL + 3 padding + index 4).
uint64_t cdr_size(const struct Settings &s);

}  // namespace psbcyc
