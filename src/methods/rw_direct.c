// SPDX-License-Identifier: MIT
/*
 * rw with --direct: the file through O_DIRECT, past the page cache. The
 * receiver fills one aligned buffer at a time from the socket and hands
 * each full one to io_uring as a WRITE, --qd of them in flight, so
 * the device works while the socket is read. Bytes before the first
 * aligned offset and after the last whole block go through the ordinary
 * fd, so any offset and length land exactly. The sender keeps --qd aligned
 * READs ahead of the socket, in file order, from the aligned block below
 * its first byte to the end of its range (one pread at a time without
 * liburing): a cold source is read at the device's pace, not one
 * request's latency at a time.
 */
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/*
 * Smaller O_DIRECT writes leave the device idle between them, and it
 * wants tens of MiB in flight: landing 1 GiB from /dev/zero over loopback
 * (-w 0, --no-verify, 9 alternating rounds) gave medians of 2405 MB/s with
 * 8 x 1 MiB, 2957 with 32 x 1 MiB, 2999 with 16 x 2 MiB and 3132 with
 * 16 x 4 MiB, against fio's 2600-3900 (libaio, 1 MiB, iodepth 16).
 * The buffers sit on transparent huge pages (io_buffers): in 4 KiB pages
 * a 2 MiB write is 512 segments, and this virtio disk takes 254 per
 * request, so the device got three requests per buffer and every other
 * run fell to ~2000 MB/s, waiting on it for nearly every buffer (8
 * alternating rounds, 1 GiB hot source: median 2036 MB/s in small pages,
 * 3236 in huge ones).
 */
#define RWD_MIN_BUF	(2u << 20)
#define RWD_QD		16
/* The default in flight is RWD_QD buffers of RWD_MIN_BUF, shared by all
 * streams and fewer when -b makes them larger, 2 per stream at least. */
#define RWD_BUDGET	((size_t)RWD_QD * RWD_MIN_BUF)

struct rwd_priv {
	int dfd;		/* the same file, opened O_DIRECT */
	size_t len;		/* each buffer; a multiple of RWD_ALIGN */
	char *mem;		/* nbuf buffers of len bytes */
	unsigned int nbuf, cur, inflight;
	unsigned int pending;	/* of inflight: prepared, not yet submitted */
	size_t fill, lim;	/* bytes in buffer cur, and where it is full */
	size_t *busy;		/* buffer i's I/O in flight (bytes), or 0 */
	/* The sender's read-ahead: read number k fills buffer k % nbuf from
	 * file offset base + k * len; got[i] is what buffer i's last read
	 * returned (bytes or -errno). Reads head..next-1 are issued. */
	ssize_t *got;
	bool ahead;		/* base and end are set */
	off_t base, end;
	uint64_t head, next;
#ifdef DND_HAVE_LIBURING
	struct io_uring ring;
	bool ring_up;
#endif
};

#ifdef DND_HAVE_LIBURING
/*
 * The buffers are not registered: pinning tens of MiB for good would need
 * CAP_IPC_LOCK or a large RLIMIT_MEMLOCK (8 MiB on Debian), and a write of
 * a MiB or more pins its pages in microseconds anyway.
 */
static int rwd_ring(struct dnd_xfer *x, struct rwd_priv *p)
{
	int r = io_uring_queue_init(p->nbuf, &p->ring, 0);

	if (r)
		return xfer_fail(x, r, "io_uring_queue_init");
	p->ring_up = true;
	return 0;
}
#else
static int rwd_ring(struct dnd_xfer *x, struct rwd_priv *p)
{
	return xfer_fail(x, -EOPNOTSUPP, "--direct receive needs io_uring");
}
#endif

/*
 * The sender reads ahead through io_uring; where it has none (built
 * without liburing, or io_uring_setup refused: a seccomp profile,
 * kernel.io_uring_disabled) it preads one block at a time, as the note
 * says. 0.
 */
static int rwd_setup_sender(struct dnd_xfer *x, struct rwd_priv *p)
{
	const char *why = "built without liburing";
#ifdef DND_HAVE_LIBURING
	int r = io_uring_queue_init(p->nbuf, &p->ring, 0);

	if (!r) {
		p->ring_up = true;
		snprintf(x->out.detail, sizeof(x->out.detail), "direct: "
			 "O_DIRECT reads of %zu KiB, %u ahead (io_uring)",
			 p->len >> 10, p->nbuf);
		return 0;
	}
	why = strerror(-r);
#endif
	snprintf(x->out.detail, sizeof(x->out.detail), "direct: O_DIRECT "
		 "reads of %zu KiB, one at a time (no io_uring: %s)",
		 p->len >> 10, why);
	return 0;
}

/* The buffers' memory. Without io_uring the sender's one pread starts up
 * to a block early and so reads up to len + RWD_ALIGN into it: room that
 * a second buffer gives, and one alone does not (--qd 1). */
static size_t rwd_memlen(const struct rwd_priv *p)
{
	return p->len * p->nbuf + (p->nbuf == 1 ? RWD_ALIGN : 0);
}

/* Each of n streams' buffers: their size and count. */
static void rwd_shape(const struct xfer_cfg *c, unsigned int n,
		      struct rwd_priv *p)
{
	size_t b = (c->bsz + RWD_ALIGN - 1) / RWD_ALIGN * RWD_ALIGN;

	p->len = b < RWD_MIN_BUF ? RWD_MIN_BUF : b;
	/* 32 MiB in flight in all by default (see RWD_BUDGET), so neither
	 * -P 64 nor -b 1G takes gigabytes. */
	p->nbuf = c->qd ? c->qd : RWD_BUDGET / p->len / n > 2 ?
		  (unsigned int)(RWD_BUDGET / p->len / n) : 2;
}

size_t rwd_ready_mem(const struct xfer_cfg *c)
{
	struct rwd_priv p;

	rwd_shape(c, 1, &p);
	return rwd_memlen(&p);
}

int rwd_setup(struct dnd_xfer *x)
{
	const struct xfer_cfg *c = x->cfg;
	struct rwd_priv *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->dfd = -1;
	rwd_shape(c, x->t->n, p);
	p->mem = io_buffers(rwd_memlen(p), true);
	p->busy = calloc(p->nbuf, sizeof(*p->busy));
	p->got = calloc(p->nbuf, sizeof(*p->got));
	if (!p->mem || !p->busy || !p->got)
		return -ENOMEM;
	p->dfd = io_reopen_direct(x->fd, c->sender ? O_RDONLY : O_WRONLY);
	if (p->dfd < 0)
		return xfer_fail(x, p->dfd == -EINVAL ? -EOPNOTSUPP : p->dfd,
				 "open O_DIRECT");
	x->out.eff_bsz = p->len;
	if (c->sender)
		return rwd_setup_sender(x, p);
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


/* The sender: n bytes read from the file, hashed as they pass, to the
 * socket. n, or -errno. */
static ssize_t rwd_forward(struct dnd_xfer *x, const char *buf, size_t n)
{
	int r;

	xfer_hash_inline(x, buf, n);
	r = io_write_all(&x->out.sc, x->sock, buf, n);
	return r ? xfer_fail(x, r, "write socket") : (ssize_t)n;
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
/* Waits for one I/O; a write's buffer is free again, a read's result is
 * in got[] (the sender judges it when it gets there). 0 or -errno. */
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
	if (x->cfg->sender) {
		p->got[i] = res;
		return 0;
	}
	if (res < 0)
		return xfer_fail(x, res, "O_DIRECT write file");
	/* Whole blocks inside the file: a short write is an error. */
	return (size_t)res == want ? 0 :
	       xfer_fail(x, -EIO, "short O_DIRECT write");
}

/* Prepares an I/O of buffer i's first n bytes (whole blocks) at file
 * offset at: a READ for the sender, a WRITE for the receiver. */
static void rwd_prep(struct rwd_priv *p, bool rd, unsigned int i, size_t n,
		     off_t at)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);

	DND_BUG_ON(!sqe);
	if (rd)
		io_uring_prep_read(sqe, p->dfd, p->mem + i * p->len,
				   (unsigned int)n, (uint64_t)at);
	else
		io_uring_prep_write(sqe, p->dfd, p->mem + i * p->len,
				    (unsigned int)n, (uint64_t)at);
	io_uring_sqe_set_data64(sqe, i);
	p->busy[i] = n;
	p->inflight++;
	p->pending++;
}

/* Submits what rwd_prep() queued. What a failed submit left unsubmitted
 * stays counted in pending, so teardown does not wait for it. */
static int rwd_submit_all(struct dnd_xfer *x, struct rwd_priv *p)
{
	int r = io_uring_submit(&p->ring);

	x->out.sc.calls[DND_SC_URING_ENTER]++;
	if (r < 0)
		return xfer_fail(x, r, "io_uring_submit");
	p->pending -= (unsigned int)r < p->pending ? (unsigned int)r :
						    p->pending;
	return 0;
}

/* Queues buffer i's first n bytes (whole blocks) at file offset at. */
static int rwd_submit(struct dnd_xfer *x, struct rwd_priv *p, unsigned int i,
		      size_t n, off_t at)
{
	rwd_prep(p, false, i, n, at);
	return rwd_submit_all(x, p);
}

/* The sender's reads, issued up to nbuf ahead of read number head. */
static int rwd_read_ahead(struct dnd_xfer *x, struct rwd_priv *p)
{
	unsigned int queued = 0;

	while (p->next - p->head < p->nbuf &&
	       p->base + (off_t)(p->next * p->len) < p->end) {
		rwd_prep(p, true, (unsigned int)(p->next % p->nbuf), p->len,
			 p->base + (off_t)(p->next * p->len));
		p->next++;
		queued++;
	}
	return queued ? rwd_submit_all(x, p) : 0;
}

/*
 * The sender: the bytes at x->pos are in buffer (read number) k; the reads
 * before k are spent, so their buffers take the next reads; then it waits
 * for read k and sends what it holds from x->pos, at most len. A read that
 * came back short ends the file there (0: the driver names an early end).
 */
static ssize_t rwd_send_ahead(struct dnd_xfer *x, size_t len)
{
	struct rwd_priv *p = x->priv;
	uint64_t k;
	unsigned int i;
	size_t at, n;
	int r;

	if (!p->ahead) {
		p->base = x->pos / RWD_ALIGN * RWD_ALIGN;
		p->end = x->frame == XFER_LENGTH ? x->pos + (off_t)x->len :
						   INT64_MAX;
		p->ahead = true;
	}
	k = (uint64_t)(x->pos - p->base) / p->len;
	i = (unsigned int)(k % p->nbuf);
	DND_BUG_ON(k < p->head);
	p->head = k;
	if ((r = rwd_read_ahead(x, p)))
		return r;
	DND_BUG_ON(k >= p->next);
	while (p->busy[i])
		if ((r = rwd_reap(x, p)))
			return r;
	if (p->got[i] < 0)
		return xfer_fail(x, (int)p->got[i], "O_DIRECT read source");
	at = (size_t)(x->pos - p->base) - (size_t)(k * p->len);
	if ((size_t)p->got[i] <= at)
		return 0;
	n = (size_t)p->got[i] - at < len ? (size_t)p->got[i] - at : len;
	return rwd_forward(x, p->mem + i * p->len + at, n);
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

/* One pread at a time: the sender without io_uring. */
static ssize_t rwd_send_one(struct dnd_xfer *x, size_t len)
{
	struct rwd_priv *p = x->priv;
	size_t delta = (size_t)(x->pos % RWD_ALIGN), want, got;
	ssize_t n;

	want = len < p->len ? len : p->len;
	n = io_pread(&x->out.sc, p->dfd, p->mem, (delta + want + RWD_ALIGN -
		     1) / RWD_ALIGN * RWD_ALIGN, x->pos - (off_t)delta);
	if (n < 0)
		return xfer_fail(x, (int)n, "pread O_DIRECT source");
	if ((size_t)n <= delta)
		return 0;
	got = (size_t)n - delta < want ? (size_t)n - delta : want;
	return rwd_forward(x, p->mem + delta, got);
}

ssize_t rwd_send(struct dnd_xfer *x, size_t len)
{
#ifdef DND_HAVE_LIBURING
	if (((struct rwd_priv *)x->priv)->ring_up)
		return rwd_send_ahead(x, len);
#endif
	return rwd_send_one(x, len);
}

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
	char *buf;
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
	buf = p->mem + p->cur * p->len + p->fill;
	n = io_read(&x->out.sc, x->sock, buf,
		    len < p->lim - p->fill ? len : p->lim - p->fill);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read socket");
	/* The buffer is what O_DIRECT writes: its hash is the landed one. */
	xfer_hash_inline(x, buf, (size_t)n);
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
	while (p->inflight > p->pending && !r)
		r = rwd_reap(x, p);
	return r;
}

void rwd_teardown(struct dnd_xfer *x)
{
	struct rwd_priv *p = x->priv;

	if (!p)
		return;
#ifdef DND_HAVE_LIBURING
	/* The kernel may still use the buffers: wait, then free. */
	while (p->inflight > p->pending && !rwd_reap(x, p))
		;
	if (p->ring_up)
		io_uring_queue_exit(&p->ring);
#endif
	if (p->dfd != -1)
		close(p->dfd);
	if (p->mem)
		io_buffers_free(p->mem, rwd_memlen(p), true);
	free(p->busy);
	free(p->got);
	free(p);
	x->priv = NULL;
}
