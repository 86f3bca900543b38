/* Socket set-up for the udp driver: addresses, ports and groups derived from topic names,
 * buffers. */
#ifndef PSB_UDP_SOCKET_H
#define PSB_UDP_SOCKET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <psbench/driver_support.h>

/* The port a topic's reader binds: derived from the (run-unique) topic name, so two
 * runs or two topics of one run meet on different ports. */
uint16_t udp_topic_port(const char *topic, uint16_t base, uint16_t span);

/* The multicast group of a topic (transport multicast): 239.255.x.y, x.y from FNV-1a of
 * the run id and then the topic, so concurrent runs sending to one port meet on different
 * groups (and a reader bound to its group gets its own run's datagrams only). */
struct in_addr udp_topic_group(const char *run_id, const char *topic);

/* A bound (reader) or connected (writer) UDP socket; -1 with err filled on failure.
 * A reader's receive buffer must hold max_message bytes (with kernel overhead). */
int udp_open_reader(const struct in_addr *addr, uint16_t port, size_t max_message, psb_error *err);
int udp_open_writer(const struct in_addr *addr, uint16_t port, psb_error *err);

/* Multicast: a reader bound to group:port (SO_REUSEADDR, so several readers of a topic
 * on one host each get every datagram) that joined the group on the interface holding
 * address iface; a writer connected to group:port that sends through that interface
 * (IP_MULTICAST_IF), with TTL 1 (never routed beyond the link) and IP_MULTICAST_LOOP on
 * (readers on the writer's own host get it too). */
int udp_open_multicast_reader(const struct in_addr *group, uint16_t port,
                              const struct in_addr *iface, size_t max_message, psb_error *err);
int udp_open_multicast_writer(const struct in_addr *group, uint16_t port,
                              const struct in_addr *iface, psb_error *err);

#endif
