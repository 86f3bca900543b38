// A driver context (one per role) and the endpoints it owns, so that its destructor can
// still destroy anything the caller left behind. Contexts of one process share the
// process's iceoryx runtime (runtime.h).
#ifndef PSBENCH_ICEORYX_CONTEXT_H
#define PSBENCH_ICEORYX_CONTEXT_H

#include <set>

#include "settings.h"

namespace psbiox {

class Endpoint;

class Context {
 public:
  // Validates cfg and registers the process with RouDi (once); throws if either fails.
  explicit Context(const psb_config &cfg);
  inline ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  Settings settings;
  std::set<Endpoint *> endpoints;  // not destroyed yet
};

// A writer or reader, registered with its context while it lives.
class Endpoint {
 public:
  explicit Endpoint(Context &ctx) : ctx_(ctx) { ctx.endpoints.insert(this); }
  virtual ~Endpoint() { ctx_.endpoints.erase(this); }
  Endpoint(const Endpoint &) = delete;
  Endpoint &operator=(const Endpoint &) = delete;

 protected:
  Context &ctx_;
};

Context::~Context() {
  while (!endpoints.empty()) delete *endpoints.begin();  // unregisters itself
}

}  // namespace psbiox

#endif
