/* udp: kernel UDP sockets, the network floor every middleware result is read against.
 * Each topic is one port; the reader binds it, the writer sends to it. Best effort,
 * volatile; messages over one datagram are fragmented (udp_reassembly.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "udp_reassembly.h"
#include "udp_socket.h"

/* Ports port_base .. port_base + PORT_SPAN - 1: by default 20000..32767, below Linux's
 * ephemeral range (32768..60999), where any outgoing socket may hold a port. */
#define PORT_SPAN 12768u
#define LISTENER_SLICE_NS 100000000LL

/* Fault injection, for testing what psbench does when a node misbehaves: after
 * fault_after writes in one writer, crash (abort), hang (never return) or exit(7). */
enum udp_fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG, FAULT_EXIT };

struct udp_context {
  struct in_addr bind_addr, peer_addr;
  uint16_t port_base;
  size_t max_payload;
  uint32_t notify;
  enum udp_fault fault;
  unsigned long fault_after;
};

struct udp_writer {
  int fd;
  uint32_t next_message_id;
  enum udp_fault fault;
  unsigned long writes_left; /* until the fault */
};

struct udp_reader {
  int fd;
  int64_t timeout_set_ns; /* SO_RCVTIMEO now in force; -1 = none set yet */
  struct udp_reassembler asm_;
  psb_on_data on_data;
  void *user;
  pthread_t listener;
  atomic_int stop;
  int has_listener;
};

static const char *find_option(const psb_config *cfg, const char *key) {
  for (size_t i = 0; i < cfg->option_count; ++i)
    if (strcmp(cfg->options[i].key, key) == 0) return cfg->options[i].value;
  return NULL;
}

/* Where parse_config reports what it refuses: check() hands every refusal to the node;
 * open() keeps the first in its psb_error. */
struct refusals {
  psb_refuse refuse; /* check(): the node's; NULL in open() */
  void *user;
  psb_error *err; /* open(): where the first refusal goes */
  int count;
};

__attribute__((format(printf, 3, 4))) static void refuse(struct refusals *r, const char *setting,
                                                         const char *fmt, ...) {
  char reason[sizeof(psb_error){0}.message];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (r->refuse)
    r->refuse(r->user, setting, reason);
  else if (r->count == 0)
    psb_set_error(r->err, "%s", reason);
  ++r->count;
}

static void parse_fault(const psb_config *cfg, struct udp_context *ctx, struct refusals *r) {
  const char *fault = find_option(cfg, "fault"), *after = find_option(cfg, "fault_after");
  if (!fault) {
    if (after)
      refuse(r, "option:fault_after", "udp: option fault_after needs option fault=crash|hang|exit");
    return;
  }
  if (strcmp(fault, "crash") == 0)
    ctx->fault = FAULT_CRASH;
  else if (strcmp(fault, "hang") == 0)
    ctx->fault = FAULT_HANG;
  else if (strcmp(fault, "exit") == 0)
    ctx->fault = FAULT_EXIT;
  else
    refuse(r, "option:fault", "udp: option fault='%s' is not one of crash|hang|exit", fault);
  char *end = NULL;
  ctx->fault_after = after ? strtoul(after, &end, 10) : 0;
  if (!after || *end || ctx->fault_after == 0)
    refuse(r, after ? "option:fault_after" : "option:fault",
           "udp: option fault needs fault_after=N (N >= 1 writes before the fault)");
}

static void inject_fault(enum udp_fault fault) {
  if (fault == FAULT_CRASH) abort();
  if (fault == FAULT_EXIT) _exit(7);
  for (;;) pause(); /* hang: signals interrupt pause(), and it goes back to waiting */
}

/* A run's own loopback address, 127.x.y.z from FNV-1a of the run id (x.y.z never .0 or
 * .255 last): all of 127/8 is `lo`, so concurrent runs whose topics hash to the same port
 * still bind different sockets. */
static struct in_addr loopback_address(const char *run_id) {
  uint32_t h = 2166136261u;
  for (const char *p = run_id; *p; ++p) h = (h ^ (uint8_t)*p) * 16777619u;
  uint32_t last = h & 0xffu;
  if (last == 0 || last == 255) h ^= 1u;
  struct in_addr a = {htonl(0x7f000000u | (h & 0x00ffffffu))};
  return a;
}

static void parse_addresses(const psb_config *cfg, struct udp_context *ctx, struct refusals *r) {
  const char *peer = find_option(cfg, "peer"), *bind_to = find_option(cfg, "bind");
  if (strcmp(cfg->transport, "unicast") != 0) {
    if (peer || bind_to)
      refuse(r, peer ? "option:peer" : "option:bind",
             "udp: options peer/bind belong to transport 'unicast'; loopback uses 127.x.y.z of the "
             "run id");
    ctx->bind_addr = loopback_address(cfg->run_id);
    ctx->peer_addr = ctx->bind_addr;
    return;
  }
  /* unicast: readers bind `bind` (default any), writers send to `peer`. */
  if (!peer)
    refuse(r, "option:peer",
           "udp: transport 'unicast' needs option peer=<IPv4 address the writer sends to>");
  else if (inet_pton(AF_INET, peer, &ctx->peer_addr) != 1)
    refuse(r, "option:peer", "udp: option peer='%s' is not an IPv4 address", peer);
  ctx->bind_addr.s_addr = htonl(INADDR_ANY);
  if (bind_to && inet_pton(AF_INET, bind_to, &ctx->bind_addr) != 1)
    refuse(r, "option:bind", "udp: option bind='%s' is not an IPv4 address", bind_to);
}

/* Fills ctx from cfg (ctx may be a scratch copy when only checking), reporting every
 * refusal to r. Returns the number of refusals. */
static int parse_config(const psb_config *cfg, struct udp_context *ctx, struct refusals *r) {
  memset(ctx, 0, sizeof *ctx);
  ctx->port_base = 20000;
  ctx->max_payload = cfg->max_payload;
  ctx->notify = cfg->notify;
  /* Also judged for what the capability sets leave out: say why it is refused. */
  if (cfg->qos.reliability != PSB_BEST_EFFORT)
    refuse(r, "reliability",
           "udp: reliability must be best_effort: the kernel neither acknowledges nor resends");
  if (cfg->qos.durability != PSB_VOLATILE)
    refuse(r, "durability", "udp: durability must be volatile: nothing is kept for late readers");
  if (cfg->qos.history != 0)
    refuse(
        r, "history",
        "udp: history cannot be set: the socket receive buffer decides what waits; leave it unset");
  if (cfg->local_address != NULL)
    refuse(r, "hosts", "udp: a run across hosts is not supported yet; it runs on one host");
  const char *base = find_option(cfg, "port_base");
  if (base) {
    char *end;
    long v = strtol(base, &end, 10);
    if (*end || v < 1024 || v > 65535 - (long)PORT_SPAN)
      refuse(r, "option:port_base", "udp: option port_base='%s': use a number from 1024 to %u",
             base, 65535 - PORT_SPAN);
    else
      ctx->port_base = (uint16_t)v;
  }
  parse_fault(cfg, ctx, r);
  parse_addresses(cfg, ctx, r);
  return r->count;
}

static int udp_check(const psb_config *cfg, psb_refuse refuse_fn, void *user) {
  struct udp_context scratch;
  struct refusals r = {refuse_fn, user, NULL, 0};
  return parse_config(cfg, &scratch, &r);
}

static psb_context *udp_open(const psb_config *cfg, psb_error *err) {
  struct udp_context *ctx = malloc(sizeof *ctx);
  struct refusals r = {NULL, NULL, err, 0};
  if (!ctx || parse_config(cfg, ctx, &r) != 0) {
    free(ctx);
    return NULL;
  }
  return (psb_context *)ctx;
}

static void udp_close(psb_context *ctx) { free(ctx); }

static psb_writer *udp_create_writer(psb_context *vctx, const char *topic, psb_error *err) {
  struct udp_context *ctx = (struct udp_context *)vctx;
  struct udp_writer *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->fault = ctx->fault;
  w->writes_left = ctx->fault_after;
  w->fd = udp_open_writer(&ctx->peer_addr, udp_topic_port(topic, ctx->port_base, PORT_SPAN), err);
  if (w->fd < 0) {
    free(w);
    return NULL;
  }
  return (psb_writer *)w;
}

static void udp_destroy_writer(psb_writer *vw) {
  struct udp_writer *w = (struct udp_writer *)vw;
  close(w->fd);
  free(w);
}

static int udp_write(psb_writer *vw, const void *data, size_t len, psb_error *err) {
  struct udp_writer *w = (struct udp_writer *)vw;
  if (w->fault != FAULT_NONE && --w->writes_left == 0) inject_fault(w->fault);
  struct udp_fragment_prefix prefix = {w->next_message_id++, (uint32_t)len, 0};
  struct iovec iov[2] = {{&prefix, sizeof prefix}, {NULL, 0}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
  do {
    size_t n = len - prefix.offset;
    if (n > UDP_FRAGMENT_PAYLOAD) n = UDP_FRAGMENT_PAYLOAD;
    iov[1].iov_base = (void *)((const uint8_t *)data + prefix.offset);
    iov[1].iov_len = n;
    if (sendmsg(w->fd, &msg, 0) < 0) {
      psb_set_error(err, "udp: send: %s", strerror(errno));
      return -1;
    }
    prefix.offset += (uint32_t)n;
  } while (prefix.offset < len);
  return 0;
}

/* Receives datagrams until a whole message is assembled: 1 = message, 0 = none within
 * the socket's timeout (or an interrupting signal), -1 = error. */
static int receive_message(struct udp_reader *r, int flags, const void **data, size_t *len,
                           psb_error *err) {
  for (;;) {
    struct udp_fragment_prefix prefix;
    struct sockaddr_in from;
    struct iovec iov[2] = {{&prefix, sizeof prefix},
                           {udp_landing(&r->asm_.a[0]), udp_landing_room(&r->asm_.a[0])}};
    struct msghdr msg = {
        .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = iov, .msg_iovlen = 2};
    ssize_t n = recvmsg(r->fd, &msg, flags);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
      psb_set_error(err, "udp: recv: %s", strerror(errno));
      return -1;
    }
    if ((size_t)n < sizeof prefix || (msg.msg_flags & MSG_TRUNC)) continue; /* not ours */
    const uint64_t sender = ((uint64_t)from.sin_addr.s_addr << 16) | from.sin_port;
    const uint8_t *whole;
    if (udp_reassembler_add(&r->asm_, sender, &prefix, (size_t)n - sizeof prefix, &whole, len)) {
      *data = whole;
      return 1;
    }
  }
}

static int set_receive_timeout(struct udp_reader *r, int64_t timeout_ns, psb_error *err) {
  if (r->timeout_set_ns == timeout_ns) return 0; /* the common case: no syscall */
  struct timeval tv = {0, 0};                    /* 0 = block without limit */
  if (timeout_ns > 0) {
    tv.tv_sec = timeout_ns / 1000000000;
    tv.tv_usec = (timeout_ns % 1000000000) / 1000;
    if (tv.tv_sec == 0 && tv.tv_usec == 0) tv.tv_usec = 1;
  }
  if (setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    psb_set_error(err, "udp: SO_RCVTIMEO: %s", strerror(errno));
    return -1;
  }
  r->timeout_set_ns = timeout_ns;
  return 0;
}

static int udp_take(psb_reader *vr, int64_t timeout_ns, const void **data, size_t *len,
                    psb_error *err) {
  struct udp_reader *r = (struct udp_reader *)vr;
  if (timeout_ns == 0) return receive_message(r, MSG_DONTWAIT, data, len, err);
  if (set_receive_timeout(r, timeout_ns, err) != 0) return -1;
  return receive_message(r, 0, data, len, err);
}

static void *listener_main(void *vr) {
  struct udp_reader *r = vr;
  psb_error err;
  while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
    const void *data;
    size_t len;
    int got = receive_message(r, 0, &data, &len, &err);
    if (got == 1) r->on_data(r->user, data, len);
    if (got < 0) break;
  }
  return NULL;
}

static void free_reader(struct udp_reader *r) {
  if (r->fd >= 0) close(r->fd);
  for (unsigned i = 0; i < UDP_ASSEMBLIES; ++i) free(r->asm_.a[i].buffer);
  free(r);
}

static psb_reader *udp_create_reader(psb_context *vctx, const char *topic, psb_on_data on_data,
                                     void *user, psb_error *err) {
  struct udp_context *ctx = (struct udp_context *)vctx;
  struct udp_reader *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->timeout_set_ns = -1;
  /* One assembly per writer whose fragments may interleave; one is enough when no
   * message is fragmented. Touched now so that the first receive does not page-fault. */
  r->asm_.count = ctx->max_payload > UDP_FRAGMENT_PAYLOAD ? UDP_ASSEMBLIES : 1;
  int have_buffers = 1;
  for (unsigned i = 0; i < r->asm_.count; ++i) {
    r->asm_.a[i].capacity = ctx->max_payload;
    r->asm_.a[i].buffer = malloc(ctx->max_payload + UDP_FRAGMENT_PAYLOAD);
    if (r->asm_.a[i].buffer)
      memset(r->asm_.a[i].buffer, 0, ctx->max_payload + UDP_FRAGMENT_PAYLOAD);
    else
      have_buffers = 0;
  }
  r->fd = udp_open_reader(&ctx->bind_addr, udp_topic_port(topic, ctx->port_base, PORT_SPAN),
                          ctx->max_payload, err);
  if (!have_buffers || r->fd < 0) {
    if (!have_buffers)
      psb_set_error(err, "udp: out of memory for %u buffers of %zu bytes", r->asm_.count,
                    ctx->max_payload);
    free_reader(r);
    return NULL;
  }
  if (on_data) {
    r->on_data = on_data;
    r->user = user;
    if (set_receive_timeout(r, LISTENER_SLICE_NS, err) != 0 ||
        pthread_create(&r->listener, NULL, listener_main, r) != 0) {
      if (!err->message[0]) psb_set_error(err, "udp: cannot start the listener thread");
      free_reader(r);
      return NULL;
    }
    r->has_listener = 1;
  }
  return (psb_reader *)r;
}

static void udp_destroy_reader(psb_reader *vr) {
  struct udp_reader *r = (struct udp_reader *)vr;
  if (r->has_listener) {
    atomic_store(&r->stop, 1);
    pthread_join(r->listener, NULL); /* wakes within LISTENER_SLICE_NS */
  }
  free_reader(r);
}

static const char *udp_version(void) {
  static char version[128];
  if (!version[0]) {
    struct utsname u;
    uname(&u);
    snprintf(version, sizeof version, "linux %s", u.release);
  }
  return version;
}

static const char *const transports[] = {"loopback", "unicast", NULL};
static const char *const option_keys[] = {"port_base", "peer",        "bind",
                                          "fault",     "fault_after", NULL};

static const psb_driver driver = {
    .abi_version = PSB_ABI_VERSION,
    .name = "udp",
    .description = "kernel UDP sockets (baseline): one port per topic, fragments over 65000 bytes",
    .version = udp_version,
    .caps = {.reliability = PSB_BEST_EFFORT,
             .durability = PSB_VOLATILE,
             .history = 0, /* the kernel socket buffer decides; no history QoS to ask for */
             .notify = PSB_NOTIFY_LISTENER | PSB_NOTIFY_WAIT | PSB_NOTIFY_POLL,
             .transports = transports,
             .option_keys = option_keys,
             .max_payload = 4u << 20,
             .readers_per_topic = 1, /* one port, one bound reader */
             .writers_per_topic = 0, /* any number of senders; fragmented messages of
                                      * up to UDP_ASSEMBLIES writers at once are each
                                      * assembled on their own */
             .crosses_hosts = 0},    /* one host only, for now */
    .check = udp_check,
    .open = udp_open,
    .close = udp_close,
    .create_writer = udp_create_writer,
    .destroy_writer = udp_destroy_writer,
    .create_reader = udp_create_reader,
    .destroy_reader = udp_destroy_reader,
    .matched_readers = NULL, /* UDP cannot tell */
    .matched_writers = NULL,
    .write = udp_write,
    .take = udp_take,
};

PSB_DRIVER_EXPORT const psb_driver *psb_driver_entry(void) { return &driver; }
