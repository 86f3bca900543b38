#include "zmq_context.h"

#include <zmq.h>

#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>

#include "psbench/sdk.hpp"
#include "reader.h"
#include "writer.h"

namespace psbzmq {

using psb::sdk::fail;

namespace {

std::mutex g_mu;  // guards everything below; never taken on the timed path
void *g_shared_zctx = nullptr;
int g_shared_refs = 0;
std::map<std::string, std::shared_ptr<InprocTopic>> g_inproc_topics;

void *acquire_shared_zctx() {
  std::lock_guard lock(g_mu);
  if (g_shared_zctx == nullptr) {
    g_shared_zctx = zmq_ctx_new();
    if (g_shared_zctx == nullptr) fail("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
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

Context::Context(const psb_config &cfg) {
  library_version();  // computed here, never on the timed path
  settings = psb::sdk::parse_or_throw(cfg, parse_settings);
  if (settings.transport == Transport::inproc) {
    zctx = acquire_shared_zctx();
    shared_zctx = true;
  } else {
    zctx = zmq_ctx_new();
    if (zctx == nullptr) fail("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
  }
}

Context::~Context() {
  while (!readers.empty()) delete *readers.begin();  // unregisters itself
  while (!writers.empty()) delete *writers.begin();
  if (shared_zctx)
    release_shared_zctx();
  else
    zmq_ctx_term(zctx);
}

std::shared_ptr<InprocTopic> inproc_topic(const std::string &topic) {
  std::lock_guard lock(g_mu);
  auto &slot = g_inproc_topics[topic];
  if (!slot) slot = std::make_shared<InprocTopic>();
  return slot;
}

std::string inproc_alone_message(const std::string &topic, const char *missing) {
  return "inproc://" + topic + " has no " + missing +
         " in this process after 1 s: inproc:// only connects sockets of one process, so it "
         "needs --placement intra (both roles in one node); between processes use --transport "
         "tcp or ipc";
}

const char *library_version() {
  static const char *const text = [] {
    static char buf[32];
    int major = 0, minor = 0, patch = 0;
    zmq_version(&major, &minor, &patch);  // the libzmq actually loaded
    std::snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
    return buf;
  }();
  return text;
}

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void set_int_option(void *socket, int option, int value, const char *name) {
  if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
    fail("zmq_setsockopt(%s=%d): %s", name, value, zmq_strerror(zmq_errno()));
}

}  // namespace psbzmq
