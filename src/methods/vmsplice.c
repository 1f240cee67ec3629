// SPDX-License-Identifier: MIT
/*
 * vmsplice: user memory enters a pipe by reference, then splice moves it on.
 *   send: read() the source into a buffer, vmsplice it into the pipe,
 *         splice the pipe to the socket.
 *   recv: read() a FULL buffer from the socket, vmsplice it, splice the pipe
 *         to the file: the 2006 thread's path (one copy, socket -> user).
 *
 * Two kernel facts shape this file:
 * - A short socket read leaves the next buffer unaligned against the page
 *   cache and cost the 2006 program about 50 MB/s (Jens Axboe's finding), so
 *   the receiver tops every read up to a full buffer before splicing it.
 * - Pages spliced into a socket stay referenced by its skbs until they are
 *   freed; on loopback the receiver reads those very pages later. Writing
 *   the buffer again too soon would change data already "sent". So after
 *   each send the buffer's pages are dropped with MADV_DONTNEED and the next
 *   read() faults in fresh ones: the honest cost of vmsplice-send. Splicing
 *   into a file copies, so the receiver may reuse its buffers at once; into
 *   a pipe or socket (stdout) it does not, so there it drops them too.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/io.h"
#include "xfer/method.h"
#include "core/pipe.h"
#include "xfer/xfer.h"

struct vms_priv {
	struct dnd_pipe pipe;
	char *buf;		/* two page-aligned buffers of len each */
	size_t len;
	unsigned int cur;	/* which half is in use (the 2006 program's) */
	uint64_t zero_filled;	/* bytes of buf already read from /dev/zero */
};

static int vms_probe(char *why, size_t len)
{
	if (io_vmsplice(&(struct dnd_syscalls){ 0 }, -1, NULL, 0, 0) ==
	    -ENOSYS) {
		snprintf(why, len, "vmsplice(2) is not in this kernel");
		return -ENOSYS;
	}
	return 0;
}

static int vms_check(const struct xfer_cfg *c, char *why, size_t len)
{
	if (!c->sender && c->ep == DND_EP_STREAM && !S_ISFIFO(c->fmode) &&
	    !S_ISSOCK(c->fmode)) {
		snprintf(why, len, "vmsplice needs a file, pipe or socket "
			 "sink; use -m rw");
		return -EINVAL;
	}
	return 0;
}

static void vms_teardown(struct dnd_xfer *x)
{
	struct vms_priv *p = x->priv;

	if (!p)
		return;
	pipe_close(&p->pipe);
	if (p->buf)
		io_buffers_free(p->buf, 2 * p->len, false);
	free(p);
	x->priv = NULL;
}

static int vms_setup(struct dnd_xfer *x)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct vms_priv *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->pipe.rd = p->pipe.wr = -1;
	x->priv = p;
	p->len = (x->cfg->bsz + page - 1) / page * page;
	p->buf = io_buffers(2 * p->len, false);
	if (!p->buf)
		return -ENOMEM;
	r = pipe_open(&p->pipe, x->cfg->pipe_size);
	if (r)
		return xfer_fail(x, r, "F_SETPIPE_SZ");
	x->out.pipe_got = p->pipe.size;
	x->out.eff_bsz = p->len;
	if (x->cfg->sender && x->cfg->ep == DND_EP_ZERO)
		snprintf(x->out.detail, sizeof(x->out.detail), "vmsplice: /dev/zero "
			 "read once into both buffers, their pages spliced "
			 "again and again (zeros never change)");
	return 0;
}

/*
 * vmsplices n bytes at buf into the pipe and splices them on to out, a
 * pipeful at a time (vmsplice returns what fit). gift: SPLICE_F_GIFT, the
 * promise that these pages are never written again. 0 or -errno.
 */
static int vms_push(struct dnd_xfer *x, char *buf, size_t n, int out,
		    loff_t *off, bool gift, const char *op)
{
	struct vms_priv *p = x->priv;
	struct iovec iov = { .iov_base = buf, .iov_len = n };

	while (iov.iov_len) {
		ssize_t v = io_vmsplice(&x->out.sc, p->pipe.wr, &iov, 1,
					gift ? SPLICE_F_GIFT : 0);

		if (v <= 0)
			return xfer_fail(x, v ? (int)v : -EIO, "vmsplice");
		iov.iov_base = (char *)iov.iov_base + v;
		iov.iov_len -= (size_t)v;
		while (v) {
			ssize_t m = io_splice(&x->out.sc, DND_SC_SPLICE_OUT,
					      p->pipe.rd, NULL, out, off,
					      (size_t)v, x->cfg->splice_flags &
					      ~SPLICE_F_GIFT);

			if (m <= 0)
				return xfer_fail(x, m ? (int)m : -EIO, op);
			v -= m;
		}
	}
	return 0;
}

/*
 * /dev/zero as the source: both buffers are read from it once; after that
 * they hold the very bytes /dev/zero would give again, and nothing ever
 * writes them, so the socket may keep referencing their pages and they are
 * spliced again without a read or a copy: vmsplice's zero-copy send at its
 * purest. Any other source is read into fresh pages every time (see top).
 */
static ssize_t vms_send_zero(struct dnd_xfer *x, size_t len)
{
	struct vms_priv *p = x->priv;
	size_t n = len < p->len ? len : p->len;
	ssize_t r;

	while (p->zero_filled < 2 * p->len) {
		r = io_read(&x->out.sc, x->fd, p->buf + p->zero_filled,
			    2 * p->len - p->zero_filled);
		if (r <= 0)
			return r ? xfer_fail(x, (int)r, "read /dev/zero") :
				   xfer_fail(x, -EIO, "read /dev/zero");
		p->zero_filled += (uint64_t)r;
	}
	/* Never written again: the very promise SPLICE_F_GIFT asks for
	 * (back to back at -b 1Mi: 61-64 Gb/s with it, 53-55 without). */
	r = vms_push(x, p->buf + p->cur * p->len, n, x->sock, NULL, true,
		     "splice pipe->socket");
	p->cur ^= 1;
	return r ? r : (ssize_t)n;
}

static ssize_t vms_send(struct dnd_xfer *x, size_t len)
{
	struct vms_priv *p = x->priv;
	char *buf = p->buf + p->cur * p->len;
	ssize_t n;
	int r;

	if (x->cfg->ep == DND_EP_ZERO)
		return vms_send_zero(x, len);
	p->cur ^= 1;
	n = io_read(&x->out.sc, x->fd, buf, len < p->len ? len : p->len);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read source");
	xfer_hash_inline(x, buf, (size_t)n);
	r = vms_push(x, buf, (size_t)n, x->sock, NULL,
		     x->cfg->splice_flags & SPLICE_F_GIFT, "splice pipe->socket");
	if (r)
		return r;
	/* The socket may still hold these pages: give them up (see top). */
	r = io_madvise(&x->out.sc, buf, p->len, MADV_DONTNEED);
	return r ? xfer_fail(x, r, "madvise") : n;
}

/*
 * The file half: vmsplice -> pipe -> splice into the file (what fio's
 * splice engine does). Splicing into a file copies the pages, so the
 * buffer may be written again as soon as this returns, SPLICE_F_GIFT or not.
 */
static ssize_t vms_put(struct dnd_xfer *x, const void *buf, size_t n)
{
	struct vms_priv *p = x->priv;
	loff_t off = x->pos;
	int r;

	r = vms_push(x, (char *)buf, n, x->fd,
		     x->cfg->ep == DND_EP_FILE ? &off : NULL,
		     x->cfg->splice_flags & SPLICE_F_GIFT, "splice pipe->file");
	if (r)
		return r;
	/* A pipe or socket sink holds the pages by reference (see top). */
	if (x->cfg->ep == DND_EP_STREAM && (const char *)buf >= p->buf &&
	    (const char *)buf < p->buf + 2 * p->len) {
		r = io_madvise(&x->out.sc, (void *)buf, p->len, MADV_DONTNEED);
		if (r)
			return xfer_fail(x, r, "madvise");
	}
	return (ssize_t)n;
}

static ssize_t vms_recv(struct dnd_xfer *x, size_t len)
{
	struct vms_priv *p = x->priv;
	char *buf = p->buf + p->cur * p->len;
	size_t want = len < p->len ? len : p->len, got = 0;

	p->cur ^= 1;
	while (got < want) {
		ssize_t n = io_read(&x->out.sc, x->sock, buf + got, want - got);

		if (n < 0) {
			x->out.held = got;
			return xfer_fail(x, (int)n, "read socket");
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	xfer_hash_inline(x, buf, got);
	return got ? vms_put(x, buf, got) : 0;
}

const struct dnd_method method_vmsplice = {
	.name = "vmsplice",
	.send_help = "read() into a buffer, vmsplice() it -> pipe -> socket",
	.recv_help = "read() a full buffer, vmsplice() it -> pipe -> file",
	.flags = DND_M_PIPE | DND_M_USERBUF | DND_M_RECVBUF,
	.nbuf = 1,
	.probe = vms_probe,
	.check = vms_check,
	.setup = vms_setup,
	.send = vms_send,
	.recv = vms_recv,
	.put = vms_put,
	.teardown = vms_teardown,
};
