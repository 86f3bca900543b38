/* udp: kernel UDP sockets, the network floor every middleware result is read against.
 * Each topic is one port; the reader binds it, the writer sends to it: on loopback to the
 * run's own 127.x.y.z, with unicast to each peer address, with multicast to a group of
 * the run and topic. Best effort, volatile; messages over one datagram are fragmented
 * (udp_reassembly.h). */
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
/* Most addresses a unicast writer sends each message to (the run's other hosts). */
#define MAX_PEERS 250u

/* Fault injection, for testing what psbench does when a node misbehaves: after
 * fault_after writes in one writer, crash (abort), hang (never return) or exit(7). */
enum udp_fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG, FAULT_EXIT };

enum udp_transport { T_LOOPBACK, T_UNICAST, T_MULTICAST };

struct udp_context {
  enum udp_transport transport;
  char run_id[128];         /* multicast: the groups are derived from it (a longer one is cut) */
  struct in_addr bind_addr; /* loopback, unicast: the address readers bind */
  struct in_addr peers[MAX_PEERS]; /* loopback, unicast: where writers send, each message */
  unsigned peer_count;
  /* unicast to the run's hosts: a peer's "port unreachable" (no reader there yet, or any
   * more) does not fail a write (see udp_write). */
  int peers_are_hosts;
  struct in_addr multicast_if; /* multicast: the interface's address (local or 127.0.0.1) */
  uint16_t port_base;
  size_t max_payload;
  uint32_t notify;
  enum udp_fault fault;
  unsigned long fault_after;
};

struct udp_writer {
  int *fds; /* one connected socket per destination (a peer, or the group) */
  unsigned fd_count;
  int ignore_refused; /* udp_context.peers_are_hosts */
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

static const char *const kTransportNames[] = {"loopback", "unicast", "multicast", NULL};

/* The run's hosts: local_address and, for unicast without option peer, peer_addresses. */
static void parse_hosts(const psb_config *cfg, struct udp_context *ctx, struct refusals *r,
                        struct in_addr *local, int use_peers) {
  if (inet_pton(AF_INET, cfg->local_address, local) != 1)
    refuse(r, "hosts", "udp: local address '%s' is not an IPv4 address", cfg->local_address);
  if (!use_peers) return;
  for (const char *const *p = cfg->peer_addresses; p && *p; ++p) {
    if (ctx->peer_count == MAX_PEERS) {
      refuse(r, "hosts", "udp: more than %u peer addresses; a unicast writer sends to at most %u",
             MAX_PEERS, MAX_PEERS);
      return;
    }
    if (inet_pton(AF_INET, *p, &ctx->peers[ctx->peer_count]) != 1)
      refuse(r, "hosts", "udp: peer address '%s' is not an IPv4 address", *p);
    else
      ++ctx->peer_count;
  }
  if (!cfg->peer_addresses || !cfg->peer_addresses[0])
    refuse(r, "hosts",
           "udp: transport 'unicast' across hosts sends to the run's other hosts, and none was "
           "given: give each one's address with --peer ADDRESS (or option peer=ADDRESS)");
  ctx->peers_are_hosts = 1;
}

static void parse_addresses(const psb_config *cfg, struct udp_context *ctx, struct refusals *r) {
  const char *peer = find_option(cfg, "peer"), *bind_to = find_option(cfg, "bind");
  const int hosts = cfg->local_address != NULL;
  int t = 0;
  while (kTransportNames[t] && strcmp(kTransportNames[t], cfg->transport) != 0) ++t;
  ctx->transport = kTransportNames[t] ? (enum udp_transport)t : T_LOOPBACK; /* node refused */
  struct in_addr local = {htonl(INADDR_LOOPBACK)};
  if (ctx->transport != T_UNICAST) {
    if (peer || bind_to)
      refuse(r, peer ? "option:peer" : "option:bind",
             ctx->transport == T_LOOPBACK
                 ? "udp: options peer/bind belong to transport 'unicast'; loopback uses "
                   "127.x.y.z of the run id"
                 : "udp: options peer/bind belong to transport 'unicast'; multicast sends to a "
                   "group of the run and topic on the interface of --address (127.0.0.1 on one "
                   "host)");
    if (ctx->transport == T_MULTICAST) {
      if (hosts) parse_hosts(cfg, ctx, r, &local, 0);
      ctx->multicast_if = local;
      return;
    }
    if (hosts)
      refuse(r, "hosts",
             "udp: transport 'loopback' keeps a run on one host (127.x.y.z); across hosts use "
             "--transport unicast (sends to every --peer) or --transport multicast");
    ctx->bind_addr = loopback_address(cfg->run_id);
    ctx->peers[0] = ctx->bind_addr;
    ctx->peer_count = 1;
    return;
  }
  /* unicast: readers bind `bind` (default: any, or --address across hosts), writers send to
   * `peer` (across hosts without it: to every --peer). */
  if (hosts) parse_hosts(cfg, ctx, r, &local, peer == NULL);
  if (peer) {
    if (inet_pton(AF_INET, peer, &ctx->peers[0]) != 1)
      refuse(r, "option:peer", "udp: option peer='%s' is not an IPv4 address", peer);
    ctx->peer_count = 1;
  } else if (!hosts) {
    refuse(r, "option:peer",
           "udp: transport 'unicast' needs option peer=<IPv4 address the writer sends to>");
  }
  ctx->bind_addr.s_addr = hosts ? local.s_addr : htonl(INADDR_ANY);
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
  snprintf(ctx->run_id, sizeof ctx->run_id, "%s", cfg->run_id ? cfg->run_id : "");
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

static void free_writer(struct udp_writer *w) {
  for (unsigned i = 0; i < w->fd_count; ++i) close(w->fds[i]);
  free(w->fds);
  free(w);
}

static psb_writer *udp_create_writer(psb_context *vctx, const char *topic, psb_error *err) {
  struct udp_context *ctx = (struct udp_context *)vctx;
  struct udp_writer *w = calloc(1, sizeof *w);
  const unsigned destinations = ctx->transport == T_MULTICAST ? 1 : ctx->peer_count;
  if (!w || !(w->fds = calloc(destinations, sizeof *w->fds))) {
    free(w);
    psb_set_error(err, "udp: out of memory for a writer");
    return NULL;
  }
  w->fault = ctx->fault;
  w->writes_left = ctx->fault_after;
  w->ignore_refused = ctx->peers_are_hosts;
  const uint16_t port = udp_topic_port(topic, ctx->port_base, PORT_SPAN);
  for (; w->fd_count < destinations; ++w->fd_count) {
    int fd;
    if (ctx->transport == T_MULTICAST) {
      const struct in_addr group = udp_topic_group(ctx->run_id, topic);
      fd = udp_open_multicast_writer(&group, port, &ctx->multicast_if, err);
    } else {
      fd = udp_open_writer(&ctx->peers[w->fd_count], port, err);
    }
    if (fd < 0) {
      free_writer(w);
      return NULL;
    }
    w->fds[w->fd_count] = fd;
  }
  return (psb_writer *)w;
}

static void udp_destroy_writer(psb_writer *vw) { free_writer((struct udp_writer *)vw); }

/* Sends one datagram to every destination. A connected socket reports a "port
 * unreachable" of an earlier datagram (nobody bound there) as ECONNREFUSED on a later send,
 * which then did not go out: across hosts, where a peer's reader may not exist yet (or any
 * more), that send is made again, and the datagram goes (lost at the peer, if still
 * nobody is there). */
static int send_to_all(struct udp_writer *w, const struct msghdr *msg, psb_error *err) {
  for (unsigned i = 0; i < w->fd_count; ++i) {
    ssize_t sent = sendmsg(w->fds[i], msg, 0);
    if (sent < 0 && errno == ECONNREFUSED && w->ignore_refused) sent = sendmsg(w->fds[i], msg, 0);
    if (sent < 0) {
      struct sockaddr_in to;
      socklen_t to_len = sizeof to;
      char text[INET_ADDRSTRLEN] = "?";
      const int e = errno;
      if (getpeername(w->fds[i], (struct sockaddr *)&to, &to_len) == 0)
        inet_ntop(AF_INET, &to.sin_addr, text, sizeof text);
      psb_set_error(err, "udp: send to %s: %s", text, strerror(e));
      return -1;
    }
  }
  return 0;
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
    if (send_to_all(w, &msg, err) != 0) return -1;
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
  const uint16_t port = udp_topic_port(topic, ctx->port_base, PORT_SPAN);
  if (ctx->transport == T_MULTICAST) {
    const struct in_addr group = udp_topic_group(ctx->run_id, topic);
    r->fd = udp_open_multicast_reader(&group, port, &ctx->multicast_if, ctx->max_payload, err);
  } else {
    r->fd = udp_open_reader(&ctx->bind_addr, port, ctx->max_payload, err);
  }
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
             .transports = kTransportNames,
             .option_keys = option_keys,
             .max_payload = 4u << 20,
             .readers_per_topic = 1, /* one port, one bound reader (per host; multicast
                                      * readers could share it, but a capability is the
                                      * driver's, not a transport's) */
             .writers_per_topic = 0, /* any number of senders; fragmented messages of
                                      * up to UDP_ASSEMBLIES writers at once are each
                                      * assembled on their own */
             .crosses_hosts = 1},    /* unicast and multicast; loopback refuses */
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
