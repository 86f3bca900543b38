#include "zmq_context.h"

#include <zmq.h>

#include <ctime>
#include <map>
#include <mutex>

#include "psbench/driver_support.h"
#include "reader.h"
#include "writer.h"

namespace psbzmq {
namespace {

std::mutex g_mu;  // guards everything below; never taken on the timed path
void *g_shared_zctx = nullptr;
int g_shared_refs = 0;
std::map<std::string, std::shared_ptr<InprocTopic>> g_inproc_topics;

void *acquire_shared_zctx(psb_error *err) {
  std::lock_guard lock(g_mu);
  if (g_shared_zctx == nullptr) {
    g_shared_zctx = zmq_ctx_new();
    if (g_shared_zctx == nullptr) {
      psb_set_error(err, "zeromq: zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
      return nullptr;
    }
  }
  ++g_shared_refs;
  return g_shared_zctx;
}

void release_shared_zctx() {
  void *term = nullptr;
  {
    std::lock_guard lock(g_mu);
    if (--g_shared_refs == 0) {
      term = g_shared_zctx;
      g_shared_zctx = nullptr;
    }
  }
  if (term) zmq_ctx_term(term);  // every socket is closed by now (linger bounded)
}

}  // namespace

Context *open_context(const psb_config *cfg, psb_error *err) {
  auto *ctx = new Context();
  if (!parse_settings(cfg, &ctx->settings, err)) {
    delete ctx;
    return nullptr;
  }
  if (ctx->settings.transport == Transport::inproc) {
    ctx->zctx = acquire_shared_zctx(err);
    ctx->shared_zctx = true;
  } else {
    ctx->zctx = zmq_ctx_new();
    if (ctx->zctx == nullptr) psb_set_error(err, "zeromq: zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
  }
  if (ctx->zctx == nullptr) {
    delete ctx;
    return nullptr;
  }
  return ctx;
}

void close_context(Context *ctx) {
  if (ctx == nullptr) return;
  while (!ctx->readers.empty()) delete *ctx->readers.begin();  // unregisters itself
  while (!ctx->writers.empty()) delete *ctx->writers.begin();
  if (ctx->shared_zctx)
    release_shared_zctx();
  else
    zmq_ctx_term(ctx->zctx);
  delete ctx;
}

std::shared_ptr<InprocTopic> inproc_topic(const std::string &topic) {
  std::lock_guard lock(g_mu);
  auto &slot = g_inproc_topics[topic];
  if (!slot) slot = std::make_shared<InprocTopic>();
  return slot;
}

std::string inproc_alone_message(const std::string &topic, const char *missing) {
  return "zeromq: inproc://" + topic + " has no " + missing +
         " in this process after 1 s: inproc:// only connects sockets of one process, so it "
         "needs --placement intra (both roles in one node); between processes use --transport "
         "tcp or ipc";
}

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool set_int_option(void *socket, int option, int value, const char *name, psb_error *err) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) == 0) return true;
  psb_set_error(err, "zeromq: zmq_setsockopt(%s=%d): %s", name, value, zmq_strerror(zmq_errno()));
  return false;
}

}  // namespace psbzmq
