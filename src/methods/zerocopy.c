// SPDX-License-Identifier: MIT
/*
 * zerocopy: read() the source into a ring of buffers and send each with
 * send(MSG_ZEROCOPY). The kernel pins the buffer's pages instead of copying
 * them, and later queues a completion (a range of send ids) on the socket's
 * error queue once it has let go of them; only then may that buffer be
 * refilled. Completions are reaped as they pile up, and the sender waits
 * only when every buffer of the ring is still held by the kernel.
 *
 * What happened is counted, never assumed:
 * - On loopback and veth the receiving socket cannot keep the sender's
 *   pages, so the kernel copies them on delivery and flags the completion
 *   SO_EE_CODE_ZEROCOPY_COPIED: pinning and notifications were paid for and
 *   the copy was not saved. Those completions are reported as copied.
 * - Each send in flight holds a notification buffer charged to the socket's
 *   option memory; past net.core.optmem_max the send fails with ENOBUFS and
 *   sends nothing. That is reaped away and retried, and counted.
 * The kernel's own guidance is that it pays off above about 10 KB a send.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/io.h"
#include "core/zcopy.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "xfer/xfer.h"

#define ZC_SLOTS_MIN		4
#define ZC_SLOTS_MAX		64
#define ZC_RING_BYTES		(64UL << 20)	/* default ring, at most */
#define ZC_WAIT_MS_DEFAULT	60000	/* bound on waits with --timeout 0 */
#define ZC_IDLE_NAPS		10	/* 1 ms naps on ENOBUFS with nothing
					 * in flight before giving up */

/* One ring buffer and the send calls whose pages the kernel still holds. */
struct zc_slot {
	uint64_t id_first;	/* id of the first send call from it */
	uint32_t ids;		/* send calls made from it */
	uint32_t pending;	/* of them not yet completed */
	uint32_t copied;	/* completions flagged ZEROCOPY_COPIED */
	size_t bytes;		/* bytes sent from it */
};

struct zc_priv {
	char *mem;		/* nslot buffers of len bytes each */
	size_t len;
	unsigned int nslot;
	unsigned int next;	/* slot to fill next */
	uint64_t next_id;	/* the kernel's id for the next send call */
	uint64_t pending;	/* send calls not completed, all slots */
	int wait_ms;		/* bound on one wait for completions */
	struct zc_slot slot[];
};

static int zc_probe(char *why, size_t len)
{
	int one = 1, r = 0, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd == -1) {
		r = -errno;
		snprintf(why, len, "cannot open a TCP socket: %s", strerror(-r));
		return r;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) == -1) {
		r = errno == ENOPROTOOPT || errno == EOPNOTSUPP ? -ENOSYS : -errno;
		snprintf(why, len, "setsockopt(SO_ZEROCOPY): %s (MSG_ZEROCOPY "
			 "needs Linux 4.14)", strerror(errno));
	}
	close(fd);
	return r;
}

/*
 * Moves a completed slot's bytes into the copied/zero-copy totals. Done
 * only when the slot is refilled or at the end, never from a completion:
 * the slot may still be in the middle of its sends.
 */
static void zc_settle(struct dnd_xfer *x, struct zc_slot *s)
{
	/* Mixed outcomes only arise from short sends; split by call count. */
	uint64_t copied = s->ids ? (uint64_t)s->bytes * s->copied / s->ids : 0;

	x->out.zc.copied_bytes += copied;
	x->out.zc.zc_bytes += s->bytes - copied;
	memset(s, 0, sizeof(*s));
}

/*
 * Credits the completed ids lo..hi (the kernel's 32-bit counter, which
 * wraps) to the slots that made those send calls.
 */
static void zc_credit(struct dnd_xfer *x, uint32_t lo, uint32_t hi,
		      bool copied)
{
	struct zc_priv *p = x->priv;
	uint64_t first = p->next_id - (uint32_t)((uint32_t)p->next_id - lo);
	uint64_t end = first + (uint32_t)(hi - lo) + 1;
	unsigned int i;

	x->out.zc.completions += end - first;
	if (copied)
		x->out.zc.copied_completions += end - first;
	for (i = 0; i < p->nslot; i++) {
		struct zc_slot *s = &p->slot[i];
		uint64_t a = first > s->id_first ? first : s->id_first;
		uint64_t b = end < s->id_first + s->ids ? end :
			     s->id_first + s->ids;
		uint32_t n;

		if (!s->pending || a >= b)
			continue;
		/* Each id completes once; clamp rather than trust it. */
		n = b - a > s->pending ? s->pending : (uint32_t)(b - a);
		s->pending -= n;
		p->pending -= n;
		if (copied)
			s->copied += n;
	}
}

/* Reads every completion queued now (MSG_ERRQUEUE never blocks). 0/-errno. */
static int zc_reap(struct dnd_xfer *x)
{
	/* Room for sock_extended_err plus the offender's address (IPv6). */
	char control[CMSG_SPACE(sizeof(struct sock_extended_err) +
				sizeof(struct sockaddr_in6))];

	for (;;) {
		struct msghdr msg = {
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct zcopy_done d;
		ssize_t r = io_recvmsg(&x->out.sc, x->sock, &msg, MSG_ERRQUEUE);

		if (r == -EAGAIN) {
			/* An empty error queue, not a timeout: keep the
			 * eagain count meaning "stalled". */
			x->out.sc.eagain--;
			return 0;
		}
		if (r < 0)
			return xfer_fail(x, (int)r, "recvmsg(MSG_ERRQUEUE)");
		r = zcopy_parse(&msg, &d);
		if (r < 0)
			return xfer_fail(x, (int)r, "MSG_ZEROCOPY completion");
		if (r)
			zc_credit(x, d.lo, d.hi, d.copied);
	}
}

/*
 * Waits (bounded) until the error queue holds something, then reaps it.
 * 0 also after a harmless signal: callers loop while their condition holds.
 */
static int zc_wait(struct dnd_xfer *x)
{
	struct zc_priv *p = x->priv;
	struct pollfd pfd = { .fd = x->sock, .events = 0 };
	uint64_t before = x->out.zc.completions;
	int err = 0, r;
	socklen_t l = sizeof(err);

	/* POLLERR is reported whenever the error queue is not empty. */
	r = poll(&pfd, 1, p->wait_ms);
	if (r == -1 && errno == EINTR)
		return io_stop_signal ? xfer_fail(x, -EINTR,
						  "interrupted by signal") : 0;
	if (r == -1)
		return xfer_fail(x, -errno, "poll for MSG_ZEROCOPY completions");
	if (r == 0)
		return xfer_fail(x, -ETIMEDOUT,
				 "waiting for MSG_ZEROCOPY completions");
	r = zc_reap(x);
	if (r || x->out.zc.completions != before)
		return r;
	/* POLLERR without a completion: the connection itself failed. */
	getsockopt(x->sock, SOL_SOCKET, SO_ERROR, &err, &l);
	if (err)
		return xfer_fail(x, -err, "send(MSG_ZEROCOPY)");
	if (pfd.revents & POLLHUP)
		return xfer_fail(x, -EPIPE, "connection closed with "
				 "MSG_ZEROCOPY sends outstanding");
	return 0;
}

/*
 * Sends n bytes of buf with MSG_ZEROCOPY, recording the send ids in s.
 * ENOBUFS (option memory full of notifications) is retried after reaping,
 * for at most one wait bound without a successful send. With nothing in
 * flight there is nothing to reap: optmem_max is below one notification.
 */
static int zc_push(struct dnd_xfer *x, struct zc_slot *s, const char *buf,
		   size_t n)
{
	struct zc_priv *p = x->priv;
	unsigned int naps = 0;
	double give_up = 0;
	size_t off = 0;
	int r;

	s->id_first = p->next_id;
	s->bytes = n;
	while (off < n) {
		ssize_t m = io_send(&x->out.sc, x->sock, buf + off, n - off,
				    MSG_ZEROCOPY);

		if (m > 0) {
			off += (size_t)m;
			s->ids++;
			s->pending++;
			p->pending++;
			p->next_id++;
			give_up = 0;
			naps = 0;
			continue;
		}
		if (m == -EAGAIN)
			return -EAGAIN;	/* SO_SNDTIMEO: the core says timeout */
		if (m != -ENOBUFS)
			return xfer_fail(x, m ? (int)m : -EIO,
					 "send(MSG_ZEROCOPY)");
		x->out.zc.enobufs++;
		if (!give_up)
			give_up = stats_now() + p->wait_ms / 1000.0;
		if (stats_now() > give_up || (!p->pending &&
					      naps++ == ZC_IDLE_NAPS))
			return xfer_fail(x, -ENOBUFS, "send(MSG_ZEROCOPY) "
					 "(raise net.core.optmem_max)");
		if (!p->pending) {
			poll(NULL, 0, 1);
			continue;
		}
		r = zc_wait(x);
		if (r)
			return r;
	}
	return 0;
}

static ssize_t zc_send(struct dnd_xfer *x, size_t len)
{
	struct zc_priv *p = x->priv;
	struct zc_slot *s = &p->slot[p->next];
	char *buf = p->mem + (size_t)p->next * p->len;
	ssize_t n;
	int r = 0;

	/* The kernel may still hold this buffer's pages: wait for them. */
	if (s->pending)
		r = zc_reap(x);
	while (!r && s->pending)
		r = zc_wait(x);
	if (r)
		return r;
	zc_settle(x, s);
	n = io_read(&x->out.sc, x->fd, buf, len < p->len ? len : p->len);
	if (n <= 0)
		return n == 0 ? 0 : xfer_fail(x, (int)n, "read source");
	xfer_hash_inline(x, buf, (size_t)n);
	r = zc_push(x, s, buf, (size_t)n);
	if (r)
		return r;
	p->next = (p->next + 1) % p->nslot;
	return n;
}

/* Every send must be completed before the trailer says what was sent. */
static int zc_finish(struct dnd_xfer *x)
{
	struct zc_priv *p = x->priv;
	unsigned int i;
	int r = zc_reap(x);

	while (!r && p->pending)
		r = zc_wait(x);
	for (i = 0; !r && i < p->nslot; i++)
		zc_settle(x, &p->slot[i]);
	return r;
}

/* Enough buffers to keep the send buffer full, within ZC_RING_BYTES. */
static unsigned int zc_nslots(const struct dnd_xfer *x, size_t len)
{
	int sndbuf = 0;
	socklen_t l = sizeof(sndbuf);
	size_t n;

	if (x->cfg->qd)
		return x->cfg->qd;
	getsockopt(x->sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, &l);
	n = (size_t)(sndbuf > 0 ? sndbuf : 0) / len + 2;
	if (n > ZC_RING_BYTES / len)
		n = ZC_RING_BYTES / len;
	if (n > ZC_SLOTS_MAX)
		n = ZC_SLOTS_MAX;
	return n < ZC_SLOTS_MIN ? ZC_SLOTS_MIN : (unsigned int)n;
}

static int zc_setup(struct dnd_xfer *x)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (x->cfg->bsz + page - 1) / page * page;
	unsigned int n = zc_nslots(x, len);
	struct timeval tv = { 0 };
	socklen_t l = sizeof(tv);
	struct zc_priv *p;
	int one = 1;
	char a[32];

	if (setsockopt(x->sock, SOL_SOCKET, SO_ZEROCOPY, &one,
		       sizeof(one)) == -1)
		return xfer_fail(x, -errno, "setsockopt(SO_ZEROCOPY)");
	p = calloc(1, sizeof(*p) + n * sizeof(p->slot[0]));
	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->nslot = n;
	p->len = len;
	p->mem = io_buffers(n * len, false);
	if (!p->mem)
		return xfer_fail(x, -ENOMEM, "allocating the zerocopy ring");
	getsockopt(x->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, &l);
	p->wait_ms = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
	if (p->wait_ms <= 0)
		p->wait_ms = ZC_WAIT_MS_DEFAULT;
	x->out.eff_bsz = len;
	x->out.zc.set = true;
	snprintf(x->out.detail, sizeof(x->out.detail), "MSG_ZEROCOPY from a ring of "
		 "%u x %s buffers; completions reaped from the error queue", n,
		 opt_fmt_size(len, a, sizeof(a)));
	return 0;
}

static void zc_teardown(struct dnd_xfer *x)
{
	struct zc_priv *p = x->priv;

	if (!p)
		return;
	/* Pages still pinned by a dying socket stay alive until it lets go. */
	if (p->mem)
		io_buffers_free(p->mem, (size_t)p->nslot * p->len, false);
	free(p);
	x->priv = NULL;
}

const struct dnd_method method_zerocopy = {
	.name = "zerocopy",
	.send_help = "read() into a ring of buffers, send(MSG_ZEROCOPY), "
		     "reap completions",
	.recv_help = NULL,
	.flags = DND_M_USERBUF | DND_M_ZEROCOPY | DND_M_ACKWAIT,
	.nbuf = ZC_SLOTS_MIN,
	.probe = zc_probe,
	.setup = zc_setup,
	.send = zc_send,
	.finish = zc_finish,
	.teardown = zc_teardown,
};
