// SPDX-License-Identifier: MIT
/*
 * rw with --direct: the file through O_DIRECT, past the page cache. The
 * receiver fills one aligned buffer at a time from the socket and hands
 * each full one to io_uring as a WRITE_FIXED, --qd of them in flight, so
 * the device works while the socket is read; the sender preads aligned
 * blocks. Bytes before the first aligned offset and after the last whole
 * block go through the ordinary fd, so any offset and length land exactly.
 */
#include <sys/mman.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef DND_HAVE_LIBURING
#include <liburing.h>
#endif

#include "core/io.h"
#include "core/log.h"
#include "methods/rw_direct.h"
#include "xfer/xfer.h"

/* O_DIRECT's alignment: covers 512- and 4096-byte logical blocks. */
#define RWD_ALIGN	4096
/* Smaller O_DIRECT writes leave the device idle between them. */
#define RWD_MIN_BUF	(1u << 20)
#define RWD_QD		8

struct rwd_priv {
	int dfd;		/* the same file, opened O_DIRECT */
	size_t len;		/* each buffer; a multiple of RWD_ALIGN */
	char *mem;		/* nbuf buffers of len bytes */
	unsigned int nbuf, cur, inflight;
	size_t fill, lim;	/* bytes in buffer cur, and where it is full */
	size_t *busy;		/* buffer i's write in flight (bytes), or 0 */
#ifdef DND_HAVE_LIBURING
	struct io_uring ring;
	bool ring_up;
#endif
};

#ifdef DND_HAVE_LIBURING
static int rwd_ring(struct dnd_xfer *x, struct rwd_priv *p)
{
	struct iovec iov = { p->mem, p->len * p->nbuf };
	int r = io_uring_queue_init(p->nbuf, &p->ring, 0);

	if (r)
		return xfer_fail(x, r, "io_uring_queue_init");
	p->ring_up = true;
	/* One registered region; each write names its slice of it. */
	r = io_uring_register_buffers(&p->ring, &iov, 1);
	return r ? xfer_fail(x, r, "io_uring_register_buffers") : 0;
}
#else
static int rwd_ring(struct dnd_xfer *x, struct rwd_priv *p)
{
	return xfer_fail(x, -EOPNOTSUPP, "--direct receive needs io_uring");
}
#endif

int rwd_setup(struct dnd_xfer *x)
{
	const struct xfer_cfg *c = x->cfg;
	struct rwd_priv *p = calloc(1, sizeof(*p));
	size_t b = (c->bsz + RWD_ALIGN - 1) / RWD_ALIGN * RWD_ALIGN;

	int r;

	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->dfd = -1;
	p->len = b < RWD_MIN_BUF ? RWD_MIN_BUF : b;
	p->nbuf = c->sender ? 1 : c->qd ? c->qd : RWD_QD;
	/* The sender's one buffer holds an unaligned start's head too. */
	p->mem = mmap(NULL, p->len * p->nbuf + RWD_ALIGN,
		      PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	p->busy = calloc(p->nbuf, sizeof(*p->busy));
	if (p->mem == MAP_FAILED || !p->busy)
		return -ENOMEM;
	p->dfd = io_reopen_direct(x->fd, c->sender ? O_RDONLY : O_WRONLY);
	if (p->dfd < 0)
		return xfer_fail(x, p->dfd == -EINVAL ? -EOPNOTSUPP : p->dfd,
				 "open O_DIRECT");
	x->out.eff_bsz = p->len;
	if (c->sender) {
		snprintf(x->out.detail, sizeof(x->out.detail), "direct: "
			 "O_DIRECT reads of %zu KiB", p->len >> 10);
		return 0;
	}
	snprintf(x->out.detail, sizeof(x->out.detail), "direct: O_DIRECT "
		 "writes of %zu KiB, %u in flight (io_uring); unaligned ends "
		 "through the page cache", p->len >> 10, p->nbuf);
	/* Writes inside the file's size do not wait for its extension. */
	r = x->frame == XFER_LENGTH && x->len ?
	    io_fallocate(&x->out.sc, x->fd, x->pos, (off_t)x->len) : 0;
	if (r && r != -EOPNOTSUPP)
		return xfer_fail(x, r, "fallocate file");
	return rwd_ring(x, p);
}

ssize_t rwd_send(struct dnd_xfer *x, size_t len)
{
	struct rwd_priv *p = x->priv;
	size_t delta = (size_t)(x->pos % RWD_ALIGN), want, got;
	ssize_t n;
	int r;

	want = len < p->len ? len : p->len;
	n = io_pread(&x->out.sc, p->dfd, p->mem, (delta + want + RWD_ALIGN -
		     1) / RWD_ALIGN * RWD_ALIGN, x->pos - (off_t)delta);
	if (n < 0)
		return xfer_fail(x, (int)n, "pread O_DIRECT source");
	if ((size_t)n <= delta)
		return 0;
	got = (size_t)n - delta < want ? (size_t)n - delta : want;
	xfer_hash_inline(x, p->mem + delta, got);
	r = io_write_all(&x->out.sc, x->sock, p->mem + delta, got);
	return r ? xfer_fail(x, r, "write socket") : (ssize_t)got;
}

/* Through the page cache: a head or tail that is not whole blocks. */
static int rwd_put_buffered(struct dnd_xfer *x, const char *buf, size_t n,
			    off_t at)
{
	while (n) {
		ssize_t w = pwrite(x->fd, buf, n, at);

		x->out.sc.calls[DND_SC_WRITE]++;
		if (w == -1 && errno == EINTR && !io_stop_signal)
			continue;
		if (w <= 0)
			return xfer_fail(x, w ? -errno : -EIO, "write file");
		x->out.sc.bytes[DND_SC_WRITE] += (uint64_t)w;
		buf += w;
		n -= (size_t)w;
		at += w;
	}
	return 0;
}

#ifdef DND_HAVE_LIBURING
/* Waits for one write; its buffer is free again. 0 or -errno. */
static int rwd_reap(struct dnd_xfer *x, struct rwd_priv *p)
{
	struct io_uring_cqe *cqe;
	unsigned int i;
	size_t want;
	int r, res;

	r = io_uring_peek_cqe(&p->ring, &cqe);
	while (r == -EAGAIN || (r == -EINTR && !io_stop_signal)) {
		x->out.sc.calls[DND_SC_URING_ENTER]++;
		r = io_uring_wait_cqe(&p->ring, &cqe);
	}
	if (r)
		return xfer_fail(x, r, "io_uring_wait_cqe");
	i = (unsigned int)io_uring_cqe_get_data64(cqe);
	res = cqe->res;
	io_uring_cqe_seen(&p->ring, cqe);
	want = p->busy[i];
	p->busy[i] = 0;
	p->inflight--;
	if (res < 0)
		return xfer_fail(x, res, "O_DIRECT write file");
	/* Whole blocks inside the file: a short write is an error. */
	return (size_t)res == want ? 0 :
	       xfer_fail(x, -EIO, "short O_DIRECT write");
}

/* Queues buffer i's first n bytes (whole blocks) at file offset at. */
static int rwd_submit(struct dnd_xfer *x, struct rwd_priv *p, unsigned int i,
		      size_t n, off_t at)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
	int r;

	DND_BUG_ON(!sqe);
	io_uring_prep_write_fixed(sqe, p->dfd, p->mem + i * p->len,
				  (unsigned int)n, (uint64_t)at, 0);
	io_uring_sqe_set_data64(sqe, i);
	r = io_uring_submit(&p->ring);
	x->out.sc.calls[DND_SC_URING_ENTER]++;
	if (r < 0)
		return xfer_fail(x, r, "io_uring_submit");
	p->busy[i] = n;
	p->inflight++;
	return 0;
}
#else
static int rwd_reap(struct dnd_xfer *x, struct rwd_priv *p)
{
	return -EOPNOTSUPP;
}

static int rwd_submit(struct dnd_xfer *x, struct rwd_priv *p, unsigned int i,
		      size_t n, off_t at)
{
	return -EOPNOTSUPP;
}
#endif

/* Buffer cur holds fill bytes for file offset at: whole blocks go direct,
 * the rest buffered. Moves on to the next buffer. */
static int rwd_flush(struct dnd_xfer *x, struct rwd_priv *p, off_t at)
{
	size_t whole = at % RWD_ALIGN ? 0 : p->fill / RWD_ALIGN * RWD_ALIGN;
	char *buf = p->mem + p->cur * p->len;
	int r = 0;

	if (whole)
		r = rwd_submit(x, p, p->cur, whole, at);
	if (!r && whole < p->fill)
		r = rwd_put_buffered(x, buf + whole, p->fill - whole,
				     at + (off_t)whole);
	p->cur = (p->cur + 1) % p->nbuf;
	p->fill = 0;
	return r;
}

ssize_t rwd_recv(struct dnd_xfer *x, size_t len)
{
	struct rwd_priv *p = x->priv;
	ssize_t n;
	off_t at;
	int r;

	while (p->busy[p->cur])
		if ((r = rwd_reap(x, p)))
			return r;
	if (!p->fill) {
		/* An unaligned start: a head up to the next block first. */
		size_t head = (size_t)(x->pos % RWD_ALIGN);

		p->lim = head ? RWD_ALIGN - head : p->len;
	}
	n = io_read(&x->out.sc, x->sock, p->mem + p->cur * p->len + p->fill,
		    len < p->lim - p->fill ? len : p->lim - p->fill);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read socket");
	/* x->pos is the offset of these n bytes until we return. */
	at = x->pos - (off_t)p->fill;
	p->fill += (size_t)n;
	if (p->fill == p->lim && (r = rwd_flush(x, p, at)))
		return r;
	return n;
}

int rwd_finish(struct dnd_xfer *x)
{
	struct rwd_priv *p = x->priv;
	int r = 0;

	if (x->cfg->sender)
		return 0;
	if (p->fill)
		r = rwd_flush(x, p, x->pos - (off_t)p->fill);
	while (p->inflight && !r)
		r = rwd_reap(x, p);
	return r;
}

void rwd_teardown(struct dnd_xfer *x)
{
	struct rwd_priv *p = x->priv;

	if (!p)
		return;
#ifdef DND_HAVE_LIBURING
	/* The kernel may still write from the buffers: wait, then free. */
	while (p->inflight && !rwd_reap(x, p))
		;
	if (p->ring_up)
		io_uring_queue_exit(&p->ring);
#endif
	if (p->dfd != -1)
		close(p->dfd);
	if (p->mem && p->mem != MAP_FAILED)
		munmap(p->mem, p->len * p->nbuf + RWD_ALIGN);
	free(p->busy);
	free(p);
	x->priv = NULL;
}
