#define _GNU_SOURCE
#include "udp_socket.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Large enough for a 4 MiB message in flight; root may exceed rmem_max with *FORCE. */
#define UDP_SOCKET_BUFFER (16 << 20)

static uint32_t fnv1a(uint32_t h, const char *text) {
  for (const char *p = text; *p; ++p) h = (h ^ (uint8_t)*p) * 16777619u;
  return h;
}

uint16_t udp_topic_port(const char *topic, uint16_t base, uint16_t span) {
  return (uint16_t)(base + fnv1a(2166136261u, topic) % span);
}

struct in_addr udp_topic_group(const char *run_id, const char *topic) {
  const uint32_t h = fnv1a(fnv1a(2166136261u, run_id), topic);
  struct in_addr a = {htonl(0xefff0000u | ((h >> 16) ^ (h & 0xffffu)))}; /* 239.255.x.y */
  return a;
}

static void grow_buffer(int fd, int opt_force, int opt) {
  int size = UDP_SOCKET_BUFFER;
  if (setsockopt(fd, SOL_SOCKET, opt_force, &size, sizeof size) != 0)
    setsockopt(fd, SOL_SOCKET, opt, &size, sizeof size);
}

static int new_socket(psb_error *err) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) psb_set_error(err, "udp: socket(): %s", strerror(errno));
  return fd;
}

/* A socket whose receive buffer holds two messages of max_message bytes, or -1. */
static int new_reader_socket(size_t max_message, psb_error *err) {
  int fd = new_socket(err);
  if (fd < 0) return -1;
  grow_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF);
  /* A buffer smaller than one message would lose every message of that size. */
  int got = 0;
  socklen_t got_len = sizeof got;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &got_len);
  if ((size_t)got < 2 * max_message) {
    psb_set_error(err,
                  "udp: the socket receive buffer is %d bytes, too small for %zu-byte messages; "
                  "run as root or raise net.core.rmem_max (sysctl -w net.core.rmem_max=%d)",
                  got, max_message, UDP_SOCKET_BUFFER);
    close(fd);
    return -1;
  }
  return fd;
}

int udp_open_reader(const struct in_addr *addr, uint16_t port, size_t max_message, psb_error *err) {
  int fd = new_reader_socket(max_message, err);
  if (fd < 0) return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *addr};
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    char text[INET_ADDRSTRLEN];
    psb_set_error(
        err,
        "udp: cannot bind %s:%u: %s (udp is one reader per topic, so a second "
        "subscriber of it is refused; or another run is on this port: set option port_base)",
        inet_ntop(AF_INET, addr, text, sizeof text), port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int udp_open_writer(const struct in_addr *addr, uint16_t port, psb_error *err) {
  int fd = new_socket(err);
  if (fd < 0) return -1;
  grow_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *addr};
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    char text[INET_ADDRSTRLEN];
    psb_set_error(err, "udp: cannot connect to %s:%u: %s",
                  inet_ntop(AF_INET, addr, text, sizeof text), port, strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int udp_open_multicast_reader(const struct in_addr *group, uint16_t port,
                              const struct in_addr *iface, size_t max_message, psb_error *err) {
  int fd = new_reader_socket(max_message, err);
  if (fd < 0) return -1;
  char g[INET_ADDRSTRLEN], i[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, group, g, sizeof g);
  inet_ntop(AF_INET, iface, i, sizeof i);
  const int on = 1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *group};
  struct ip_mreq join = {.imr_multiaddr = *group, .imr_interface = *iface};
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    psb_set_error(err,
                  "udp: cannot bind %s:%u: %s (another run is on this port: set option "
                  "port_base)",
                  g, port, strerror(errno));
    close(fd);
    return -1;
  }
  if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof join) != 0) {
    psb_set_error(err, "udp: cannot join multicast group %s on the interface of %s: %s", g, i,
                  strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}

int udp_open_multicast_writer(const struct in_addr *group, uint16_t port,
                              const struct in_addr *iface, psb_error *err) {
  int fd = new_socket(err);
  if (fd < 0) return -1;
  grow_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF);
  char g[INET_ADDRSTRLEN], i[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, group, g, sizeof g);
  inet_ntop(AF_INET, iface, i, sizeof i);
  const unsigned char loop = 1, ttl = 1;
  if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, iface, sizeof *iface) != 0 ||
      setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0 ||
      setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0) {
    psb_set_error(err, "udp: cannot send multicast through the interface of %s: %s", i,
                  strerror(errno));
    close(fd);
    return -1;
  }
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *group};
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    psb_set_error(err, "udp: cannot connect to %s:%u through the interface of %s: %s", g, port, i,
                  strerror(errno));
    close(fd);
    return -1;
  }
  return fd;
}
