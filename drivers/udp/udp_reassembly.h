/* Messages larger than one datagram travel as fragments, each behind a 12-byte
 * prefix. The reader scatters each datagram straight into place in the message
 * buffer, so an in-order message is never copied twice. */
#ifndef PSB_UDP_REASSEMBLY_H
#define PSB_UDP_REASSEMBLY_H

#include <stddef.h>
#include <stdint.h>

#define UDP_FRAGMENT_PAYLOAD 65000u /* under the 65507-byte UDP limit */

struct udp_fragment_prefix {
  uint32_t message_id;
  uint32_t total_len;
  uint32_t offset;
};

struct udp_reassembly {
  uint8_t *buffer; /* capacity + UDP_FRAGMENT_PAYLOAD bytes */
  size_t capacity; /* largest message accepted */
  uint32_t message_id;
  size_t total, have;
  int active;      /* a message is partly assembled */
  uint64_t sender; /* the writer it comes from (address and port) */
};

/* Fragmented messages of several writers of a topic interleave at the reader. Each
 * writer's message is assembled on its own: up to UDP_ASSEMBLIES writers at a time (one
 * more evicts the oldest partly assembled message of another writer: it is lost). */
#define UDP_ASSEMBLIES 4

struct udp_reassembler {
  struct udp_reassembly a[UDP_ASSEMBLIES]; /* a[0] is where every datagram lands */
  unsigned count;                          /* assemblies in use: 1, or UDP_ASSEMBLIES */
  unsigned next_evict;
};

/* Where the next datagram's payload should land, and how much room there is. */
static inline uint8_t *udp_landing(const struct udp_reassembly *r) {
  return r->buffer + (r->active ? r->have : 0);
}
static inline size_t udp_landing_room(const struct udp_reassembly *r) {
  return UDP_FRAGMENT_PAYLOAD + r->capacity - (r->active ? r->have : 0);
}

/* Accounts for a datagram whose payload (n bytes) landed at udp_landing(). Returns 1
 * when a whole message is now at the start of buffer (length in *len), 0 otherwise;
 * fragments that do not fit the message being assembled are dropped. */
int udp_reassembly_add(struct udp_reassembly *r, const struct udp_fragment_prefix *p, size_t n,
                       size_t *len);

/* Accounts for a datagram of `sender` whose payload (n bytes) landed at
 * udp_landing(&s->a[0]). A datagram of the writer a[0] assembles (or any writer, when
 * a[0] is idle) stays in place; one of another writer is copied to that writer's own
 * assembly (a copy only while messages interleave). Returns 1 when a whole message is
 * at *data (length in *len), valid until the next call; 0 otherwise. */
int udp_reassembler_add(struct udp_reassembler *s, uint64_t sender,
                        const struct udp_fragment_prefix *p, size_t n, const uint8_t **data,
                        size_t *len);

#endif
