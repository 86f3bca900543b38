// A driver context (one per role) and the endpoints it owns, so that close()
// can still tear down, and unlink, anything the caller did not destroy.
#ifndef PSBENCH_SHM_CONTEXT_H
#define PSBENCH_SHM_CONTEXT_H

#include "settings.h"

namespace psbshm {

struct Context;

struct Endpoint {
  Context *ctx = nullptr;
  Endpoint *prev = nullptr;
  Endpoint *next = nullptr;
  bool is_reader = false;
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
  }
};

}  // namespace psbshm

#endif
