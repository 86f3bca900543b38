/* Socket set-up for the udp driver: addresses, ports derived from topic names, buffers. */
#ifndef PSB_UDP_SOCKET_H
#define PSB_UDP_SOCKET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <psbench/driver_support.h>

/* The port a topic's reader binds: derived from the (run-unique) topic name, so two
 * runs or two topics of one run meet on different ports. */
uint16_t udp_topic_port(const char *topic, uint16_t base, uint16_t span);

/* A bound (reader) or connected (writer) UDP socket; -1 with err filled on failure.
 * A reader's receive buffer must hold max_message bytes (with kernel overhead). */
int udp_open_reader(const struct in_addr *addr, uint16_t port, size_t max_message, psb_error *err);
int udp_open_writer(const struct in_addr *addr, uint16_t port, psb_error *err);

#endif
