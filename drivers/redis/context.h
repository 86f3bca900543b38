// A driver context (one per role) and the endpoints it owns, so that close() can still
// tear down what the caller did not destroy. The context itself holds no connection:
// every writer has its own publishing connection and every reader its own subscribing
// connection (a connection in subscribed mode cannot PUBLISH).
#ifndef PSBENCH_REDIS_CONTEXT_H
#define PSBENCH_REDIS_CONTEXT_H

#include "settings.h"

namespace psbredis {

struct Context;

struct Endpoint {
  virtual ~Endpoint() = default;
  Context *ctx = nullptr;
  Endpoint *prev = nullptr;
  Endpoint *next = nullptr;
};

struct Context {
  Settings settings;
  Endpoint *endpoints = nullptr;

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
    e->prev = e->next = nullptr;
    e->ctx = nullptr;
  }
  ~Context() {
    while (endpoints != nullptr) delete endpoints;  // each destructor unlinks itself
  }
};

}  // namespace psbredis

#endif
