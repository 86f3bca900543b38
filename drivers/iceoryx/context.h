// A driver context (one per role) and the endpoints it owns, so that its destructor can
// still destroy anything the caller left behind. Contexts of one process share the
// process's iceoryx runtime (runtime.h).
#ifndef PSBENCH_ICEORYX_CONTEXT_H
#define PSBENCH_ICEORYX_CONTEXT_H

#include "settings.h"

namespace psbiox {

class Context;

struct Endpoint {
  Context *ctx = nullptr;
  Endpoint *prev = nullptr;
  Endpoint *next = nullptr;
  bool is_reader = false;
  virtual ~Endpoint() = default;
};

class Context {
 public:
  // Validates cfg and registers the process with RouDi (once); throws if either fails.
  explicit Context(const psb_config &cfg);
  ~Context() {
    while (endpoints != nullptr) delete endpoints;  // endpoints the caller left behind
  }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  void link(Endpoint *e) {
    e->ctx = this;
    e->prev = nullptr;
    e->next = endpoints;
    if (endpoints != nullptr) endpoints->prev = e;
    endpoints = e;
  }
  void unlink(Endpoint *e) {
    if (e->prev != nullptr)
      e->prev->next = e->next;
    else
      endpoints = e->next;
    if (e->next != nullptr) e->next->prev = e->prev;
    e->ctx = nullptr;
    e->prev = e->next = nullptr;
  }

  Settings settings;
  Endpoint *endpoints = nullptr;
};

}  // namespace psbiox

#endif
