// A driver context: the run's settings and the ZeroMQ context its sockets live in.
//
// tcp and ipc: every driver context has its own zmq context (one I/O thread), as a
// separate process would. inproc: all driver contexts of the process share one zmq
// context, because inproc:// endpoints only meet inside one zmq context; a registry of
// the inproc writers and readers per topic in this process lets endpoints tell a peer
// that is merely late from one that can never come (it lives in another process).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "psbench/driver.h"
#include "settings.h"

namespace psbzmq {

class Reader;
class Writer;

class Context {
 public:
  // Throws psb::sdk::Error when cfg is refused or no zmq context can be made.
  explicit Context(const psb_config &cfg);
  // Destroys the endpoints a caller left (zmq_ctx_term() would wait for their sockets
  // forever), then ends the zmq context.
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  Settings settings;
  void *zctx = nullptr;
  bool shared_zctx = false;  // inproc: the process-wide context
  // Endpoints not destroyed yet.
  std::set<Reader *> readers;
  std::set<Writer *> writers;
};

// inproc endpoints of one topic in this process.
struct InprocTopic {
  std::atomic<int> writers{0};
  std::atomic<bool> ever_written{false}, ever_read{false};
};
std::shared_ptr<InprocTopic> inproc_topic(const std::string &topic);

// How long an inproc endpoint waits for a peer in its own process before it says that
// inproc cannot reach another process. In the node both roles of an intra-process run
// have created their endpoints before either measures, so this only matters to a run
// whose roles are in separate processes.
constexpr int64_t kInprocPeerGraceNs = 1'000'000'000;
// The explanation given when that grace has passed (without the driver's name).
std::string inproc_alone_message(const std::string &topic, const char *missing);

int64_t monotonic_ns();

// The version of the libzmq loaded, e.g. "4.3.4".
const char *library_version();

// Sets an int socket option; throws psb::sdk::Error if it fails.
void set_int_option(void *socket, int option, int value, const char *name);

}  // namespace psbzmq
