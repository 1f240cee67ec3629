// SPDX-License-Identifier: MIT
/*
 * uring and uring-splice (uring_splice.c): the transfer driven through
 * io_uring (liburing), sharing the ring of uring_ring.c.
 *   uring send:   READ_FIXED from the source into registered buffers, then
 *                 SEND_ZC from the same registered buffer, asking for
 *                 IORING_SEND_ZC_REPORT_USAGE; a kernel without SEND_ZC gets
 *                 a plain SEND, and the note says so.
 *   uring recv:   RECV into the registered buffers, WRITE_FIXED to the sink.
 *   uring-splice: IORING_OP_SPLICE source -> pipe -> socket, and socket ->
 *                 pipe -> sink (the 2010 "Splice status" thread's path,
 *                 without a system call each).
 *
 * Order: two sends in flight on one TCP socket may complete in either order,
 * so exactly one socket request is in flight at a time and a short send is
 * resubmitted from where it stopped. The buffers lie side by side in one
 * registered region, so full buffers in a row leave as one larger send.
 * File reads carry explicit offsets, so up to --qd of them overlap (and
 * /dev/zero's, whose order cannot show); a pipe gets one read at a time for
 * the same reason as the socket. The splice variant keeps one splice into
 * and one out of its pipe in flight, and never asks for more than the pipe
 * holds, so neither can wait on the other.
 *
 * A SEND_ZC buffer is refilled only after its notification CQE; the ones
 * flagged IORING_NOTIF_USAGE_ZC_COPIED (all of them on loopback, where the
 * receiver copies) are counted as copied. Splice requests run in io-wq
 * worker threads, which shows as context switches. The receiver never asks
 * the socket for more than the payload left: the trailer follows it.
 */
#ifdef DND_HAVE_LIBURING
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"
#include "core/compat.h"
#include "core/io.h"
#include "core/kernel.h"
#include "core/log.h"
#include "core/pipe.h"
#include "methods/uring_ring.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

static int uring_probe(char *why, size_t len)
{
	static const int ops[] = { IORING_OP_READ_FIXED,
				   IORING_OP_WRITE_FIXED, IORING_OP_SEND,
				   IORING_OP_RECV };
	static const char *const names[] = { "READ_FIXED", "WRITE_FIXED",
					     "SEND", "RECV" };

	return uring_probe_ops(why, len, ops, names, 4);
}

/* The registered buffer index of slot i (one for the ring, if it fits). */
static int uring_buf_index(const struct uring_priv *p, unsigned int i)
{
	return p->one_buf ? 0 : (int)i;
}

/* Source read or socket recv into s, from byte s->len on. */
static void uring_prep_fill(struct dnd_xfer *x, struct uring_slot *s)
{
	struct uring_priv *p = x->priv;
	unsigned int i = (unsigned int)(s - p->slot);
	struct io_uring_sqe *sqe = uring_sqe(x, URING_FILL, i);

	if (x->cfg->sender)
		io_uring_prep_read_fixed(sqe, x->fd, s->buf + s->len,
					 (unsigned int)(s->want - s->len),
					 x->cfg->ep == DND_EP_FILE ? s->off + s->len :
					 (uint64_t)-1, uring_buf_index(p, i));
	else
		io_uring_prep_recv(sqe, x->sock, s->buf, s->want, 0);
	p->fills++;
}

/*
 * Socket send or sink write of the k slots from index a on, starting at
 * byte done of the first. They are adjacent in memory and all but the last
 * are full, so one request carries them: fewer, larger sends.
 */
static void uring_prep_drain(struct dnd_xfer *x, unsigned int a,
			     unsigned int k)
{
	struct uring_priv *p = x->priv;
	struct uring_slot *s = &p->slot[a];
	struct io_uring_sqe *sqe = uring_sqe(x, URING_DRAIN, a | k << 16);
	size_t n = (size_t)(k - 1) * p->len + p->slot[a + k - 1].len - s->done;
	unsigned int i;

	if (x->cfg->sender && p->zc)
		io_uring_prep_send_zc_fixed(sqe, x->sock, s->buf + s->done, n,
					    0, IORING_SEND_ZC_REPORT_USAGE,
					    (unsigned int)uring_buf_index(p, a));
	else if (x->cfg->sender)
		io_uring_prep_send(sqe, x->sock, s->buf + s->done, n, 0);
	else
		io_uring_prep_write_fixed(sqe, x->fd, s->buf + s->done,
					  (unsigned int)n,
					  x->cfg->ep == DND_EP_FILE ?
					  s->off + s->done : (uint64_t)-1,
					  uring_buf_index(p, a));
	for (i = a; i < a + k; i++)
		p->slot[i].state = URING_DRAINING;
	p->draining = true;
}

/* Queues the next drain: the full slots in order from drain_seq. */
static void uring_queue_drain(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;
	unsigned int a, k;

	for (;;) {
		a = (unsigned int)(p->drain_seq % p->nslot);
		if (p->draining || p->slot[a].state != URING_FULL)
			return;
		if (p->slot[a].len)
			break;
		p->slot[a].state = URING_FREE;	/* empty: read at the end */
		p->drain_seq++;
	}
	for (k = 1; p->one_buf && a + k < p->nslot &&
	     p->slot[a + k - 1].len == p->len &&
	     p->slot[a + k].state == URING_FULL && p->slot[a + k].len; k++)
		;
	/* Once each: after a short drain the slots behind it go again. */
	for (unsigned int i = a; i < a + k; i++)
		if (!p->slot[i].hashed) {
			xfer_hash_inline(x, p->slot[i].buf, p->slot[i].len);
			p->slot[i].hashed = true;
		}
	uring_prep_drain(x, a, k);
}

/* Queues fills within the budget (len past base) and the next drain. */
static void uring_queue(struct dnd_xfer *x, uint64_t base, size_t len)
{
	struct uring_priv *p = x->priv;
	struct uring_slot *s;

	while (!p->eof && p->fills < p->max_fills && p->issued - base < len) {
		size_t room = len - (size_t)(p->issued - base);

		s = &p->slot[p->fill_seq % p->nslot];
		if (s->state != URING_FREE)
			break;
		s->state = URING_FILLING;
		s->want = room < p->len ? room : p->len;
		s->len = s->done = 0;
		s->hashed = false;
		s->off = p->off;
		if (x->cfg->sender)
			p->off += s->want;
		p->issued += s->want;
		p->fill_seq++;
		uring_prep_fill(x, s);
	}
	uring_queue_drain(x);
}

/* A buffer is free again: its bytes go into the copied/zero-copy totals. */
static void uring_slot_free(struct dnd_xfer *x, struct uring_slot *s)
{
	struct uring_priv *p = x->priv;
	uint64_t copied = s->len;

	if (x->cfg->sender && p->zc)
		copied = s->reqs ? (uint64_t)s->len * s->copied / s->reqs : 0;
	x->out.zc.copied_bytes += copied;
	x->out.zc.zc_bytes += s->len - copied;
	s->state = URING_FREE;
	s->notifs = s->reqs = s->copied = 0;
}

static int uring_filled(struct dnd_xfer *x, struct uring_slot *s, int res)
{
	struct uring_priv *p = x->priv;

	p->fills--;
	if (res < 0)
		return uring_failed(x, res, x->cfg->sender ? "io_uring READ_FIXED "
				    "source" : "io_uring RECV socket");
	if (!x->cfg->sender) {
		s->off = p->off;
		p->off += (uint64_t)res;
		x->out.sc.bytes[DND_SC_URING_ENTER] += (uint64_t)res;
	}
	s->len += (size_t)res;
	if (!res)
		p->eof = true;
	/* A regular file reads short only at its end: top up until then. */
	if (res && x->cfg->sender && x->cfg->ep == DND_EP_FILE && s->len < s->want) {
		uring_prep_fill(x, s);
		return 0;
	}
	p->issued -= s->want - s->len;
	s->state = URING_FULL;
	return 0;
}

/* The drain of k slots from a moved res bytes: hand back whole slots. */
static int uring_drained(struct dnd_xfer *x, unsigned int a, unsigned int k,
			 int res, unsigned int flags)
{
	struct uring_priv *p = x->priv;
	unsigned int i;

	p->draining = false;
	if (res == -EINVAL && p->zc && !p->sent_any)
		return xfer_fail(x, res, "SEND_ZC refused "
				 "IORING_SEND_ZC_REPORT_USAGE (Linux < 6.2)");
	if (res <= 0)
		return uring_failed(x, res ? res : -EIO, !x->cfg->sender ?
				    "io_uring WRITE_FIXED sink" : p->zc ?
				    "io_uring SEND_ZC socket" :
				    "io_uring SEND socket");
	p->sent_any = true;
	if (x->cfg->sender)
		x->out.sc.bytes[DND_SC_URING_ENTER] += (uint64_t)res;
	for (i = a; i < a + k; i++) {
		struct uring_slot *s = &p->slot[i];
		size_t take = s->len - s->done;

		if (flags & IORING_CQE_F_MORE) {
			s->notifs++;
			s->reqs++;
		}
		take = (size_t)res < take ? (size_t)res : take;
		s->done += take;
		res -= (int)take;
		if (s->done < s->len) {
			s->state = URING_FULL;	/* short: the rest goes next */
			continue;
		}
		p->returned += s->len;
		p->drain_seq++;
		if (s->notifs)
			s->state = URING_NOTIF;
		else
			uring_slot_free(x, s);
	}
	return 0;
}

/* A SEND_ZC notification: the kernel let go of the k slots from a. */
static void uring_notified(struct dnd_xfer *x, unsigned int a, unsigned int k,
			   int res)
{
	struct uring_priv *p = x->priv;
	bool copied = (uint32_t)res & IORING_NOTIF_USAGE_ZC_COPIED;
	unsigned int i;

	x->out.zc.completions++;
	x->out.zc.copied_completions += copied;
	for (i = a; i < a + k; i++) {
		struct uring_slot *s = &p->slot[i];

		s->copied += copied;
		if (!--s->notifs && s->state == URING_NOTIF)
			uring_slot_free(x, s);
	}
}

static int uring_cqe(struct dnd_xfer *x, const struct io_uring_cqe *cqe)
{
	struct uring_priv *p = x->priv;
	unsigned int a = (uint16_t)cqe->user_data;
	unsigned int k = (uint16_t)(cqe->user_data >> 16);

	if (a + k > p->nslot)	/* guards the slot array */
		return 0;
	switch (cqe->user_data >> 32) {
	case URING_FILL:
		return uring_filled(x, &p->slot[a], cqe->res);
	case URING_DRAIN:
		if (!(cqe->flags & IORING_CQE_F_NOTIF))
			return uring_drained(x, a, k, cqe->res, cqe->flags);
		uring_notified(x, a, k, cqe->res);
		return 0;
	}
	return 0;
}

static ssize_t uring_move(struct dnd_xfer *x, size_t len)
{
	struct uring_priv *p = x->priv;
	uint64_t base = p->returned;
	int r;

	for (;;) {
		uring_queue(x, base, len);
		/* Progress returns at once; queued requests go in with the
		 * next call's io_uring_enter. */
		if (p->returned > base)
			return (ssize_t)(p->returned - base);
		if (p->eof && !p->fills && !p->draining)
			return 0;
		r = uring_step(x);
		if (r)
			return r;
	}
}

/*
 * The file half alone (filebench): one write in flight, WRITE_FIXED when
 * buf lies in the registered memory that uring_put_mem offers, plain
 * WRITE otherwise. Returns n once all of it is written, or -errno.
 */
static ssize_t uring_put(struct dnd_xfer *x, const void *buf, size_t n)
{
	struct uring_priv *p = x->priv;
	const char *b = buf;
	size_t done = 0;

	while (done < n) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);
		struct io_uring_cqe *cqe;
		uint64_t at = (uint64_t)x->pos + done;
		size_t k = n - done;
		int r;

		if (!sqe)
			return xfer_fail(x, -EBUSY, "io_uring queue full");
		if (b + done >= p->mem && b + n <= p->mem + p->memlen)
			io_uring_prep_write_fixed(sqe, x->fd, b + done,
						  (unsigned int)k, at,
						  p->one_buf ? 0 :
						  (int)((b + done - p->mem) /
							(ptrdiff_t)p->len));
		else
			io_uring_prep_write(sqe, x->fd, b + done,
					    (unsigned int)k, at);
		x->out.sc.calls[DND_SC_URING_ENTER]++;
		r = io_uring_submit_and_wait(&p->ring, 1);
		if (r >= 0)
			r = io_uring_peek_cqe(&p->ring, &cqe);
		if (r < 0)
			return xfer_fail(x, r, "io_uring_enter");
		r = cqe->res;
		io_uring_cqe_seen(&p->ring, cqe);
		if (r <= 0)
			return xfer_fail(x, r ? r : -EIO, "io_uring WRITE file");
		x->out.sc.bytes[DND_SC_URING_ENTER] += (uint64_t)r;
		done += (size_t)r;
	}
	return (ssize_t)n;
}

/* Registered buffers, and whether this kernel has SEND_ZC. */
static int uring_setup_bufs(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct io_uring_probe *pr;
	struct iovec *iov;
	unsigned int i;
	int r;

	p->len = (x->cfg->bsz + page - 1) / page * page;
	p->memlen = p->nslot * p->len;
	p->mem = io_buffers(p->memlen, false);
	iov = calloc(p->nslot, sizeof(*iov));
	if (!p->mem || !iov) {
		free(iov);
		return xfer_fail(x, -ENOMEM, "allocating io_uring buffers");
	}
	for (i = 0; i < p->nslot; i++) {
		p->slot[i].buf = p->mem + (size_t)i * p->len;
		iov[i].iov_base = p->slot[i].buf;
		iov[i].iov_len = p->len;
	}
	/* One registered buffer (at most 1 GiB) lets a send span slots. */
	p->one_buf = p->memlen <= URING_REG_MAX;
	if (p->one_buf)
		iov[0].iov_len = p->memlen;
	r = io_uring_register_buffers(&p->ring, iov, p->one_buf ? 1 :
							       p->nslot);
	free(iov);
	if (r == -ENOMEM)
		return xfer_fail(x, r, "registering io_uring buffers (raise "
				 "ulimit -l or lower --qd)");
	if (r)
		return xfer_fail(x, r, "registering io_uring buffers");
	pr = io_uring_get_probe_ring(&p->ring);
	p->zc = x->cfg->sender && pr &&
		io_uring_opcode_supported(pr, IORING_OP_SEND_ZC);
	if (pr)
		io_uring_free_probe(pr);
	return 0;
}

static int uring_setup(struct dnd_xfer *x)
{
	unsigned int qd = x->cfg->qd ? x->cfg->qd : URING_QD_DEFAULT;
	struct uring_priv *p;
	char a[32];
	int r;

	r = uring_setup_ring(x, qd);
	if (!r)
		r = uring_setup_bufs(x);
	if (r)
		return r;
	p = x->priv;
	p->on_cqe = uring_cqe;
	/* Reads of a pipe would race each other: one at a time. Zeros are
	 * zeros in any order. */
	p->max_fills = x->cfg->sender && (x->cfg->ep == DND_EP_FILE ||
				     x->cfg->ep == DND_EP_ZERO) ? qd : 1;
	x->out.eff_bsz = p->len;
	x->out.zc.set = true;
	opt_fmt_size(p->len, a, sizeof(a));
	if (!x->cfg->sender)
		snprintf(x->out.detail, sizeof(x->out.detail), "RECV into %u registered "
			 "%s buffers, WRITE_FIXED to the sink", qd, a);
	else if (p->zc)
		snprintf(x->out.detail, sizeof(x->out.detail), "READ_FIXED, then SEND_ZC "
			 "(report usage) from %u registered %s buffers", qd, a);
	else
		snprintf(x->out.detail, sizeof(x->out.detail), "plain SEND: this kernel "
			 "has no IORING_OP_SEND_ZC; %u registered %s buffers",
			 qd, a);
	return 0;
}

static void *uring_put_mem(struct dnd_xfer *x, size_t *len)
{
	struct uring_priv *p = x->priv;

	*len = p->len;
	return p->mem;
}

const struct dnd_method method_uring = {
	.name = "uring",
	.send_help = "io_uring READ_FIXED into registered buffers, SEND_ZC "
		     "(or SEND)",
	.recv_help = "io_uring RECV into registered buffers, WRITE_FIXED",
	.flags = DND_M_USERBUF | DND_M_ZEROCOPY | DND_M_ACKWAIT |
		 DND_M_RECVBUF,
	.nbuf = URING_QD_DEFAULT,
	.probe = uring_probe,
	.setup = uring_setup,
	.send = uring_move,
	.recv = uring_move,
	.put = uring_put,
	.put_mem = uring_put_mem,
	.finish = uring_finish,
	.teardown = uring_teardown,
};

#endif /* DND_HAVE_LIBURING */
