// SPDX-License-Identifier: MIT
/*
 * splice: page references move through a pipe; no user copy on either side.
 *   send: source -> pipe -> socket (file, /dev/zero or a pipe source).
 *   recv: socket -> pipe -> file, the path Samba wanted in seed 003. Data
 *         from 1448-byte segments lands as partial pages, so a pipe of 16
 *         slots carries far less than 16 pages; --pipe-size helps (seed 003).
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/io.h"
#include "xfer/method.h"
#include "core/pipe.h"
#include "xfer/xfer.h"

static int splice_probe(char *why, size_t len)
{
	if (io_splice(&(struct dnd_syscalls){ 0 }, DND_SC_SPLICE_IN, -1, NULL,
		      -1, NULL, 1, 0) == -ENOSYS) {
		snprintf(why, len, "splice(2) is not in this kernel");
		return -ENOSYS;
	}
	return 0;
}

static int splice_check(const struct xfer_cfg *c, char *why, size_t len)
{
	if (c->ep == DND_EP_STREAM && !S_ISFIFO(c->fmode) &&
	    !S_ISSOCK(c->fmode)) {
		snprintf(why, len, "splice needs a file, pipe or socket %s; "
			 "use -m rw", c->sender ? "source" : "sink");
		return -EINVAL;
	}
	return 0;
}

static int splice_setup(struct dnd_xfer *x)
{
	struct dnd_pipe *p = malloc(sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = pipe_open(p, x->cfg->pipe_size);
	if (r) {
		free(p);
		return xfer_fail(x, r, "F_SETPIPE_SZ");
	}
	x->priv = p;
	x->out.pipe_got = p->size;
	x->out.eff_bsz = x->cfg->bsz;
	return 0;
}

/* Empties n bytes from the pipe into out; 0 or -errno. */
static int splice_drain(struct dnd_xfer *x, int out, loff_t *off, size_t n,
			const char *op)
{
	struct dnd_pipe *p = x->priv;

	while (n) {
		ssize_t m = io_splice(&x->out.sc, DND_SC_SPLICE_OUT, p->rd, NULL,
				      out, off, n, x->cfg->splice_flags);

		if (m < 0)
			return xfer_fail(x, (int)m, op);
		if (m == 0)
			return xfer_fail(x, -EIO, op);
		n -= (size_t)m;
	}
	return 0;
}

static ssize_t splice_send(struct dnd_xfer *x, size_t len)
{
	struct dnd_pipe *p = x->priv;
	loff_t off = x->pos;
	ssize_t n;
	int r;

	n = io_splice(&x->out.sc, DND_SC_SPLICE_IN, x->fd,
		      x->cfg->ep == DND_EP_FILE ? &off : NULL, p->wr, NULL,
		      len < x->cfg->bsz ? len : x->cfg->bsz, x->cfg->splice_flags);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "splice source->pipe");
	r = splice_drain(x, x->sock, NULL, (size_t)n, "splice pipe->socket");
	return r ? r : n;
}

static ssize_t splice_recv(struct dnd_xfer *x, size_t len)
{
	struct dnd_pipe *p = x->priv;
	loff_t off = x->pos;
	ssize_t n;
	int r;

	n = io_splice(&x->out.sc, DND_SC_SPLICE_IN, x->sock, NULL, p->wr, NULL,
		      len < x->cfg->bsz ? len : x->cfg->bsz, x->cfg->splice_flags);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "splice socket->pipe");
	r = splice_drain(x, x->fd, x->cfg->ep == DND_EP_FILE ? &off : NULL,
			 (size_t)n, "splice pipe->file");
	return r ? r : n;
}

static void splice_teardown(struct dnd_xfer *x)
{
	if (!x->priv)
		return;
	pipe_close(x->priv);
	free(x->priv);
	x->priv = NULL;
}

const struct dnd_method method_splice = {
	.name = "splice",
	.send_help = "splice() source -> pipe -> socket",
	.recv_help = "splice() socket -> pipe -> file",
	.flags = DND_M_PIPE | DND_M_ZEROCOPY,
	.probe = splice_probe,
	.check = splice_check,
	.setup = splice_setup,
	.send = splice_send,
	.recv = splice_recv,
	.teardown = splice_teardown,
};
