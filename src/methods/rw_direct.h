/* SPDX-License-Identifier: MIT */
/* rw's --direct half: the file through O_DIRECT (rw_direct.c). */
#ifndef DND_RW_DIRECT_H
#define DND_RW_DIRECT_H

#include <sys/types.h>

struct dnd_xfer;
struct xfer_cfg;

/* rw's hooks when x->cfg->direct, same contracts as struct dnd_method's:
 * setup allocates x->priv (teardown frees it, also after a partial setup);
 * the receiver's writes are in flight until finish returns. */
int rwd_setup(struct dnd_xfer *x);
/* The buffer memory (huge pages) one stream's setup asks for. */
size_t rwd_ready_mem(const struct xfer_cfg *c);
ssize_t rwd_send(struct dnd_xfer *x, size_t len);
ssize_t rwd_recv(struct dnd_xfer *x, size_t len);
int rwd_finish(struct dnd_xfer *x);
void rwd_teardown(struct dnd_xfer *x);

#endif
