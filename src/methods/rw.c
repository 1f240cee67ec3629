// SPDX-License-Identifier: MIT
/*
 * rw: read() into a user buffer, write() it out, both directions. The
 * baseline every other path is measured against: two copies per byte
 * (file->user, user->socket) and no tricks. The buffer is page-aligned so the
 * comparison with the page-based paths is fair.
 */
#include <sys/mman.h>
#include <errno.h>
#include <stdlib.h>

#include "core/io.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

struct rw_priv {
	char *buf;
	size_t len;
};

static int rw_setup(struct dnd_xfer *x)
{
	struct rw_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->len = x->cfg->bsz;
	p->buf = mmap(NULL, p->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->buf == MAP_FAILED) {
		free(p);
		return -ENOMEM;
	}
	x->priv = p;
	x->out.eff_bsz = p->len;
	return 0;
}

static ssize_t rw_send(struct dnd_xfer *x, size_t len)
{
	struct rw_priv *p = x->priv;
	ssize_t n;
	int r;

	n = io_read(&x->out.sc, x->fd, p->buf, len < p->len ? len : p->len);
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

	n = io_read(&x->out.sc, x->sock, p->buf, len < p->len ? len : p->len);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read socket");
	return rw_put(x, p->buf, (size_t)n);
}

static void rw_teardown(struct dnd_xfer *x)
{
	struct rw_priv *p = x->priv;

	if (!p)
		return;
	munmap(p->buf, p->len);
	free(p);
	x->priv = NULL;
}

const struct dnd_method method_rw = {
	.name = "rw",
	.send_help = "read() the source into a buffer, write() it to the socket",
	.recv_help = "read() the socket into a buffer, write() it to the file",
	.flags = DND_M_USERBUF,
	.setup = rw_setup,
	.send = rw_send,
	.recv = rw_recv,
	.put = rw_put,
	.teardown = rw_teardown,
};
