#include "udp_reassembly.h"

#include <string.h>

int udp_reassembly_add(struct udp_reassembly *r, const struct udp_fragment_prefix *p, size_t n,
                       size_t *len) {
  uint8_t *landed = udp_landing(r);
  if (p->total_len > r->capacity || (size_t)p->offset + n > p->total_len) {
    r->active = 0; /* not one of ours, or truncated */
    return 0;
  }
  if (p->offset == 0) {
    if (landed != r->buffer) memmove(r->buffer, landed, n); /* a new message after a loss */
    r->message_id = p->message_id;
    r->total = p->total_len;
    r->have = n;
    r->active = 1;
  } else if (r->active && p->message_id == r->message_id && p->offset == r->have) {
    r->have += n;
  } else {
    r->active = 0; /* a fragment went missing: the message is lost */
    return 0;
  }
  if (r->have < r->total) return 0;
  r->active = 0;
  *len = r->total;
  return 1;
}
