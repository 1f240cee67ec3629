// SPDX-License-Identifier: MIT
/*
 * rw: read() into a user buffer, write() it out, both directions. The
 * baseline every other path is measured against: two copies per byte
 * (file->user, user->socket) and no tricks. The buffer is page-aligned so the
 * comparison with the page-based paths is fair. With --direct the file
 * side goes through O_DIRECT instead (rw_direct.c). From /dev/zero the
 * buffer is read once and written again and again: its bytes are the ones
 * /dev/zero would give every time, and what is left is the socket copy
 * alone, as iperf3 measures it. Zeroing costs more than itself: it also
 * evicts the buffer just before the socket copy reads it (-b 1Mi -w 0,
 * 4 GiB to -m null, 7 rounds: 2448 -> 3022 MB/s, 346 -> 285 us/MB).
 */
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/io.h"
#include "core/land.h"
#include "methods/rw_direct.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

struct rw_priv {
	char *buf;
	size_t len;
	size_t zero_filled;	/* bytes of buf already read from /dev/zero */
};

/* --direct needs a regular file on a file system that takes O_DIRECT,
 * and io_uring to receive. Checked before any connection: the sender's
 * source itself, the receiver's target directory. */
static int rw_check(const struct xfer_cfg *c, char *why, size_t len)
{

	if (!c->direct)
		return 0;
	if (c->ep != DND_EP_FILE) {
		snprintf(why, len, "--direct needs a regular file %s: O_DIRECT "
			 "bypasses the page cache of a file, and this is %s",
			 c->sender ? "to read" : "to land in",
			 c->ep == DND_EP_ZERO ? "/dev/zero" :
			 c->ep == DND_EP_NULL ? "/dev/null" : "a stream");
		return -EINVAL;
	}
#ifndef DND_HAVE_LIBURING
	if (!c->sender) {
		snprintf(why, len, "--direct keeps its writes in flight with "
			 "io_uring, and this dnd was built without liburing");
		return -EINVAL;
	}
#endif
	if (!c->path)
		return 0;
	return c->sender ? io_check_direct(c->path, O_RDONLY, "send from a "
					   "disk file system", why, len) :
			   land_check_direct(c->path, why, len);
}

/* --direct's buffers are tens of MiB, first touched slowly on a VM. */
static size_t rw_ready_mem(const struct xfer_cfg *c, bool *huge)
{
	*huge = true;
	return c->direct ? rwd_ready_mem(c) : 0;
}

static int rw_setup(struct dnd_xfer *x)
{
	struct rw_priv *p;

	if (x->cfg->direct)
		return rwd_setup(x);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->len = x->cfg->bsz;
	p->buf = io_buffers(p->len, false);
	if (!p->buf) {
		free(p);
		return -ENOMEM;
	}
	x->priv = p;
	x->out.eff_bsz = p->len;
	if (x->cfg->sender && x->cfg->ep == DND_EP_ZERO)
		snprintf(x->out.detail, sizeof(x->out.detail), "rw: /dev/zero "
			 "read once into the buffer, written again and again "
			 "(zeros never change)");
	return 0;
}

/* The sender's next n bytes, in p->buf: read from the source, or from
 * /dev/zero only until the buffer has been filled once (see top). */
static ssize_t rw_fill(struct dnd_xfer *x, struct rw_priv *p, size_t n)
{
	ssize_t r;

	if (x->cfg->ep != DND_EP_ZERO)
		return io_read(&x->out.sc, x->fd, p->buf, n);
	while (p->zero_filled < p->len) {
		r = io_read(&x->out.sc, x->fd, p->buf + p->zero_filled,
			    p->len - p->zero_filled);
		if (r <= 0)
			return r ? r : -EIO;
		p->zero_filled += (size_t)r;
	}
	return (ssize_t)n;
}

static ssize_t rw_send(struct dnd_xfer *x, size_t len)
{
	struct rw_priv *p = x->priv;
	ssize_t n;
	int r;

	if (x->cfg->direct)
		return rwd_send(x, len);
	n = rw_fill(x, p, len < p->len ? len : p->len);
	if (n < 0)
		return xfer_fail(x, (int)n, "read source");
	xfer_hash_inline(x, p->buf, (size_t)n);
	r = io_write_all(&x->out.sc, x->sock, p->buf, (size_t)n);
	if (r)
		return xfer_fail(x, r, "write socket");
	return n;
}

/* write() until all n bytes are in; with an O_DIRECT fd and an aligned
 * buffer this is filebench's direct path. */
static ssize_t rw_put(struct dnd_xfer *x, const void *buf, size_t n)
{
	int r = io_write_all(&x->out.sc, x->fd, buf, n);

	return r ? xfer_fail(x, r, "write file") : (ssize_t)n;
}

static ssize_t rw_recv(struct dnd_xfer *x, size_t len)
{
	struct rw_priv *p = x->priv;
	ssize_t n;

	if (x->cfg->direct)
		return rwd_recv(x, len);
	n = io_read(&x->out.sc, x->sock, p->buf, len < p->len ? len : p->len);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read socket");
	xfer_hash_inline(x, p->buf, (size_t)n);
	return rw_put(x, p->buf, (size_t)n);
}

static int rw_finish(struct dnd_xfer *x)
{
	return x->cfg->direct ? rwd_finish(x) : 0;
}

static void rw_teardown(struct dnd_xfer *x)
{
	struct rw_priv *p = x->priv;

	if (x->cfg->direct) {
		rwd_teardown(x);
		return;
	}
	if (!p)
		return;
	io_buffers_free(p->buf, p->len, false);
	free(p);
	x->priv = NULL;
}

const struct dnd_method method_rw = {
	.name = "rw",
	.send_help = "read() the source into a buffer, write() it to the socket",
	.recv_help = "read() the socket into a buffer, write() it to the file",
	.flags = DND_M_USERBUF | DND_M_USERSOCK | DND_M_RECVBUF | DND_M_SEEKS,
	.nbuf = 1,
	.check = rw_check,
	.setup = rw_setup,
	.ready_mem = rw_ready_mem,
	.send = rw_send,
	.recv = rw_recv,
	.put = rw_put,
	.finish = rw_finish,
	.teardown = rw_teardown,
};
