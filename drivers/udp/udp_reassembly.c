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

/* The assembly of a writer other than a[0]'s: its own, an idle one, or the next to evict. */
static struct udp_reassembly *assembly_of(struct udp_reassembler *s, uint64_t sender) {
  for (unsigned i = 1; i < s->count; ++i)
    if (s->a[i].active && s->a[i].sender == sender) return &s->a[i];
  for (unsigned i = 1; i < s->count; ++i)
    if (!s->a[i].active) return &s->a[i];
  struct udp_reassembly *victim = &s->a[1 + s->next_evict++ % (s->count - 1)];
  victim->active = 0; /* its partly assembled message is lost */
  return victim;
}

int udp_reassembler_add(struct udp_reassembler *s, uint64_t sender,
                        const struct udp_fragment_prefix *p, size_t n, const uint8_t **data,
                        size_t *len) {
  struct udp_reassembly *home = &s->a[0], *r = home;
  if (s->count > 1) {
    int elsewhere = 0;
    for (unsigned i = 1; i < s->count; ++i)
      if (s->a[i].active && s->a[i].sender == sender) elsewhere = 1;
    if (elsewhere || (home->active && home->sender != sender)) {
      r = assembly_of(s, sender);
      if (n > udp_landing_room(r)) {
        r->active = 0;
        return 0;
      }
      memcpy(udp_landing(r), udp_landing(home), n);
    }
  }
  const int done = udp_reassembly_add(r, p, n, len);
  if (r->active) r->sender = sender;
  if (done) *data = r->buffer;
  return done;
}
