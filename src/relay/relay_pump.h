/* SPDX-License-Identifier: MIT */
/*
 * Moving one direction of a relay flow: socket -> pooled pipe -> socket with
 * non-blocking splice, or through a buffer; and a socket that broke.
 */
#ifndef DND_RELAY_PUMP_H
#define DND_RELAY_PUMP_H

#include "relay/relay_types.h"

/*
 * fd[s] of f broke with err (-errno): what waits to be written to it is
 * thrown away (counted in bytes_discarded) and its source is no longer
 * read; what fd[s] itself still holds is forwarded. Keeps the first error.
 */
void relay_sock_broken(struct relay *r, struct relay_flow *f, int s, int err);

/*
 * Gives d's copy buffer back to r's cache (or frees it when the cache is
 * full), whatever it holds; d has none afterwards.
 */
void relay_buf_put(struct relay *r, struct relay_dir *d);

/* Frees the cached copy buffers (at the end of the loop). */
void relay_bufs_free(struct relay *r);

/*
 * Moves direction i (fd[i] -> fd[!i]) until nothing moves or the wakeup's
 * byte budget is spent; passes a FIN on at EOF. A socket error (the peer
 * reset, a timeout, an unreachable network) only marks that side broken
 * and returns 0. Returns -errno when the relay itself failed: out of
 * memory, or an fd it cannot splice or send to; the caller then closes the
 * flow (relay_flow_after()). Never blocks.
 */
int relay_pump(struct relay *r, struct relay_flow *f, int i);

#endif
