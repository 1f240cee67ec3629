// SPDX-License-Identifier: MIT
/*
 * The transfer driver (xfer.h): the one caller of method hooks. It asks a
 * method to move bounded pieces, handles the ends of the data, stop
 * requests, progress and the timed window, for one stream inline or for
 * several in threads.
 */
#include <sys/ioctl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io.h"
#include "core/log.h"
#include "core/proto.h"
#include "xfer/method.h"
#include "xfer/xfer.h"
#include "xfer/xfer_watch.h"

/* Largest piece asked of a method at once; methods bound it further. */
#define XFER_PIECE_MAX	(1UL << 30)

int xfer_fail_at(struct dnd_xfer *x, int err, const char *op, const char *file,
		 int line)
{
	if (!x->err) {
		x->err = err;
		snprintf(x->err_op, sizeof(x->err_op), "%s", op);
		x->err_where = file;
		x->err_line = line;
	}
	return err;
}

void xfer_hash_inline(struct dnd_xfer *x, const void *buf, size_t n)
{
	if (x->hash)
		XXH3_64bits_update(x->hash, buf, n);
}

/* ---- one stream ---- */

/*
 * Accounts n bytes moved. With --sync stream a receiver starts writeback of
 * each sync_every bytes behind it (sync_file_range does not wait), so the
 * disk works while the network does and the final fdatasync has little
 * left; without it all writeback waits for that fdatasync.
 */
static int xfer_advance(struct dnd_xfer *x, ssize_t n)
{
	const struct xfer_cfg *c = x->cfg;
	int r;

	x->done += (uint64_t)n;
	x->pos += n;
	atomic_fetch_add(&x->t->moved, (uint64_t)n);
	if (x->t->n == 1 && !x->t->interval)
		xfer_progress(x->t);
	if (!c->sync_every || c->sender || c->ep != DND_EP_FILE ||
	    (uint64_t)(x->pos - x->synced) < c->sync_every)
		return 0;
	r = io_sync_range(&x->out.sc, x->fd, x->synced, x->pos - x->synced);
	if (r)
		return xfer_fail(x, r, "sync_file_range");
	x->synced = x->pos;
	return 0;
}

/* Maps a hook's negative return to a failure with a useful operation name. */
static int xfer_hook_failed(struct dnd_xfer *x, ssize_t r)
{
	if (r == -EINTR && io_stop_signal)
		return xfer_fail(x, -EINTR, "interrupted by signal");
	if (r == -EAGAIN)
		return xfer_fail(x, -ETIMEDOUT, "no progress (--timeout)");
	return xfer_fail(x, (int)r, x->cfg->sender ? "send" : "receive");
}

/* One hook call for at most len bytes: the count, 0 at the end, or -errno
 * with x->err set. */
static ssize_t xfer_step(struct dnd_xfer *x, size_t len)
{
	const struct dnd_method *m = x->cfg->m;
	ssize_t r;

	if (io_stop_signal)
		return xfer_fail(x, -EINTR, "interrupted by signal");
	r = x->cfg->sender ? m->send(x, len) : m->recv(x, len);
	if (r < 0)
		return x->err ? x->err : xfer_hook_failed(x, r);
	DND_BUG_ON((size_t)r > len);
	return r;
}

/* Moves exactly len bytes with the method, or fails. */
static int xfer_move(struct dnd_xfer *x, uint64_t len)
{
	uint64_t left = len;

	while (left) {
		ssize_t r = xfer_step(x, left > XFER_PIECE_MAX ?
				      XFER_PIECE_MAX : (size_t)left);

		if (r < 0)
			return (int)r;
		if (r == 0)
			return xfer_fail(x, -ENODATA, x->cfg->sender ?
					 "source ended early" :
					 "peer closed early");
		left -= (uint64_t)r;
		r = xfer_advance(x, r);
		if (r)
			return (int)r;
	}
	return 0;
}

/* Moves until the source ends or the peer closes (--raw, no framing). */
static int xfer_move_until_eof(struct dnd_xfer *x)
{
	for (;;) {
		ssize_t r = xfer_step(x, XFER_PIECE_MAX);

		if (r <= 0)
			return (int)r;
		r = xfer_advance(x, r);
		if (r)
			return (int)r;
	}
}

/*
 * How many bytes a stream source holds now, waiting until it holds some or
 * ends. The data is then known to be there, so a segment header can be sent
 * before the method moves it (the method itself may not read ahead).
 */
static int xfer_stream_avail(struct dnd_xfer *x, uint64_t *avail)
{
	struct pollfd pfd = { .fd = x->fd, .events = POLLIN };
	int n = 0;

	for (;;) {
		int r = poll(&pfd, 1, -1);

		if (r == -1 && errno == EINTR && !io_stop_signal)
			continue;
		if (r == -1)
			return xfer_fail(x, -errno, "poll source");
		if (ioctl(x->fd, FIONREAD, &n) == -1)
			return xfer_fail(x, -errno, "FIONREAD on source");
		/* Readable with nothing queued is the end of the stream. */
		break;
	}
	*avail = (uint64_t)n;
	return 0;
}

/* --time: the step between looks at the clock, so a run ends within a
 * few milliseconds of its time. */
#define XFER_TIMED_SEG	(4ULL << 20)

static int xfer_send_segments(struct dnd_xfer *x)
{
	double end = stats_now() + x->cfg->seconds;

	for (;;) {
		uint64_t n = XFER_TIMED_SEG * (stats_now() < end);
		int r = x->cfg->seconds > 0 ? 0 : xfer_stream_avail(x, &n);

		if (r)
			return r;
		if (n > DND_SEG_MAX)
			n = DND_SEG_MAX;
		r = proto_send_seg(&x->out.sc, x->sock, n);
		if (r)
			return xfer_fail(x, r, "send segment header");
		if (!n)
			return 0;
		r = xfer_move(x, n);
		if (r)
			return r;
	}
}

static int xfer_recv_segments(struct dnd_xfer *x)
{
	for (;;) {
		uint64_t n;
		int r = proto_recv_seg(&x->out.sc, x->sock, &n);

		if (r == -EBADMSG)
			return xfer_fail(x, r, "bad segment length from peer");
		if (r == -ENODATA)
			return xfer_fail(x, r, "peer closed early");
		if (r)
			return xfer_hook_failed(x, r);
		if (!n)
			return 0;
		r = xfer_move(x, n);
		if (r)
			return r;
	}
}

/*
 * Skips a hole of n bytes: hashed as the zeros it reads as, punched when
 * rewriting in place (a fresh file's is a hole already), and the file
 * position moved past it for the methods that use it (rw).
 */
static int xfer_hole(struct dnd_xfer *x, uint64_t n)
{
	static const unsigned char zeros[65536];
	uint64_t left;
	int r;

	for (left = n; x->hash && left; ) {
		size_t k = left < sizeof(zeros) ? (size_t)left : sizeof(zeros);

		XXH3_64bits_update(x->hash, zeros, k);
		left -= k;
	}
	if (x->t->punch) {
		do
			r = fallocate(x->fd, FALLOC_FL_PUNCH_HOLE |
				      FALLOC_FL_KEEP_SIZE, x->pos, (off_t)n);
		while (r == -1 && errno == EINTR);
		if (r == -1)
			return xfer_fail(x, -errno, "punch a hole (send with "
					 "--no-sparse to write zeros)");
	}
	x->pos += (off_t)n;
	x->done += n;
	x->holes += n;
	atomic_fetch_add(&x->t->moved, n);
	if (lseek(x->fd, x->pos, SEEK_SET) == -1)
		return xfer_fail(x, -errno, "lseek past a hole");
	return 0;
}

/* Sparse: the range's bytes inside the extents, the holes skipped. */
static int xfer_move_sparse(struct dnd_xfer *x)
{
	const struct xfer *t = x->t;
	uint64_t at = (uint64_t)(x->pos - t->ext_base), end = at + x->len;
	uint32_t i;
	int r = 0;

	for (i = 0; !r && i < t->n_ext && t->ext[i].off < end; i++) {
		const struct dnd_extent *e = &t->ext[i];
		uint64_t from = e->off > at ? e->off : at;
		uint64_t to = e->off + e->len < end ? e->off + e->len : end;

		if (e->off + e->len <= at)
			continue;
		r = from > at ? xfer_hole(x, from - at) : 0;
		if (!r)
			r = xfer_move(x, to - from);
		at = to;
	}
	return r || at >= end ? r : xfer_hole(x, end - at);
}

/* A stream's whole payload, framed as it was given. 0 or -errno. */
static int xfer_stream_run(struct dnd_xfer *x)
{
	switch (x->frame) {
	case XFER_LENGTH:
		return x->t->sparse ? xfer_move_sparse(x) : xfer_move(x, x->len);
	case XFER_SEGMENTS:
		return x->cfg->sender ? xfer_send_segments(x) :
					xfer_recv_segments(x);
	case XFER_UNTIL_EOF:
		return xfer_move_until_eof(x);
	}
	return xfer_fail(x, -EINVAL, "unknown framing");
}

/* ---- the transfer ---- */

int xfer_check(const struct xfer_cfg *c, char *why, size_t len)
{
	const struct dnd_method *m = c->m;
	int r;

	if (!(c->sender ? m->send : m->recv)) {
		snprintf(why, len, "%s cannot %s", m->name,
			 c->sender ? "send" : "receive");
		return -EINVAL;
	}
	if (m->check && m->check(c, why, len))
		return -EINVAL;
	r = method_probe(m, why, len);
	return r == -EINVAL ? -EOPNOTSUPP : r;
}

int xfer_open(struct xfer *t, const struct xfer_cfg *c, unsigned int n)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (!n || n > DND_XFER_MAX_STREAMS)
		return -EINVAL;
	t->st = calloc(n, sizeof(*t->st));
	if (!t->st)
		return -ENOMEM;
	t->cfg = *c;
	t->n = n;
	t->length = UINT64_MAX;
	atomic_store(&t->first_bad, -1);
	for (i = 0; i < n; i++) {
		t->st[i].cfg = &t->cfg;
		t->st[i].t = t;
		t->st[i].sock = -1;
		t->st[i].fd = -1;
	}
	return 0;
}

void xfer_stream(struct xfer *t, unsigned int i, int sock, int fd, off_t pos,
		 enum xfer_frame frame, uint64_t len)
{
	struct dnd_xfer *x = &t->st[i];

	x->sock = sock;
	x->fd = fd;
	x->pos = pos;
	x->synced = pos;
	x->frame = frame;
	x->len = len;
	x->last = i + 1 == t->n;
}

off_t xfer_end(const struct xfer *t)
{
	off_t end = 0;
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		const struct dnd_xfer *x = &t->st[i];

		if (x->frame != XFER_LENGTH)
			return -1;
		if (x->pos + (off_t)x->len > end)
			end = x->pos + (off_t)x->len;
	}
	return end;
}

void xfer_ready(const struct xfer_cfg *c)
{
	bool huge = false;
	size_t n = c->m->ready_mem ? c->m->ready_mem(c, &huge) : 0;

	if (n)
		io_buffers_ready(n, huge);
}

void xfer_unready(void)
{
	io_buffers_unready();
}

int xfer_setup(struct xfer *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		struct dnd_xfer *x = &t->st[i];
		int r = t->cfg.m->setup(x);

		/* A partly set-up stream is torn down too. */
		x->set_up = true;
		if (r)
			return x->err ? x->err : xfer_fail(x, r, "setup");
	}
	return 0;
}

/* The method's finish on every stream, then fdatasync of a file sink. */
static int xfer_finish(struct xfer *t)
{
	struct dnd_xfer *x0 = &t->st[0];
	unsigned int i;
	int r;

	for (i = 0; i < t->n; i++) {
		struct dnd_xfer *x = &t->st[i];

		if (t->cfg.m->finish && (r = t->cfg.m->finish(x)))
			return x->err ? x->err : xfer_fail(x, r, "finish");
	}
	/* One fdatasync covers the file whichever stream wrote it. */
	if (t->cfg.sender || t->cfg.ep != DND_EP_FILE)
		return 0;
	if (t->before_sync)
		t->before_sync(t, t->before_sync_arg);
	r = io_fdatasync(&x0->out.sc, x0->fd);
	return r ? xfer_fail(x0, r, "fdatasync") : 0;
}

int xfer_run(struct xfer *t)
{
	struct dnd_sample a, b;
	int r;

	stats_sample(&a);
	if (t->n == 1 && !t->interval) {
		t->st[0].t_begin = a.mono;
		r = xfer_stream_run(&t->st[0]);
		t->st[0].t_end = stats_now();
	} else {
		r = xfer_run_threads(t, xfer_stream_run);
	}
	if (!r)
		r = xfer_finish(t);
	xfer_progress_end(t);
	stats_sample(&b);
	stats_cost(&a, &b, xfer_done(t) - xfer_holes(t), &t->cost);
	t->timed = true;
	return r;
}

void xfer_close(struct xfer *t)
{
	unsigned int i;

	for (i = 0; t->st && i < t->n; i++)
		if (t->st[i].set_up && t->cfg.m->teardown)
			t->cfg.m->teardown(&t->st[i]);
	free(t->st);
	t->st = NULL;
	t->n = 0;
}

const struct dnd_xfer *xfer_failed(const struct xfer *t)
{
	int first = atomic_load(&t->first_bad);
	unsigned int i;

	if (first >= 0)
		return &t->st[first];
	for (i = 0; i < t->n; i++)
		if (t->st[i].err)
			return &t->st[i];
	return NULL;
}

/* The streams' done, or their holes. */
static uint64_t xfer_sum(const struct xfer *t, bool holes)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < t->n; i++)
		sum += holes ? t->st[i].holes : t->st[i].done;
	return sum;
}

uint64_t xfer_done(const struct xfer *t)
{
	return xfer_sum(t, false);
}

uint64_t xfer_holes(const struct xfer *t)
{
	return xfer_sum(t, true);
}

void xfer_totals(const struct xfer *t, struct xfer_out *o)
{
	unsigned int i, k;

	memset(o, 0, sizeof(*o));
	if (!t->n)
		return;
	*o = t->st[0].out;
	for (i = 1; i < t->n; i++) {
		const struct xfer_out *s = &t->st[i].out;

		for (k = 0; k < DND_SC_COUNT; k++) {
			o->sc.calls[k] += s->sc.calls[k];
			o->sc.bytes[k] += s->sc.bytes[k];
		}
		o->held += s->held;
		o->sc.eagain += s->sc.eagain;
		o->sc.eintr += s->sc.eintr;
		o->zc.zc_bytes += s->zc.zc_bytes;
		o->zc.copied_bytes += s->zc.copied_bytes;
		o->zc.completions += s->zc.completions;
		o->zc.copied_completions += s->zc.copied_completions;
		o->zc.enobufs += s->zc.enobufs;
	}
}

/* ---- the file half alone ---- */

int xfer_land(struct dnd_xfer *x, uint64_t size, unsigned char *buf,
	      void (*stamp)(unsigned char *buf, size_t n, uint64_t i,
			    void *arg), void *arg)
{
	const struct dnd_method *m = x->cfg->m;
	size_t bsz = x->cfg->bsz, mlen = 0;
	unsigned char *mem;
	uint64_t end = (uint64_t)x->pos + size, i = 0;

	if (!m->put)
		return xfer_fail(x, -EOPNOTSUPP, "no file half (put hook)");
	mem = m->put_mem ? m->put_mem(x, &mlen) : NULL;
	if (mem && mlen >= bsz) {
		memcpy(mem, buf, bsz);
		buf = mem;
	}
	while ((uint64_t)x->pos < end) {
		size_t n = end - (uint64_t)x->pos < bsz ?
			   (size_t)(end - (uint64_t)x->pos) : bsz;
		ssize_t w;

		if (io_stop_signal)
			return xfer_fail(x, -EINTR, "interrupted by signal");
		if (stamp)
			stamp(buf, n, i++, arg);
		w = m->put(x, buf, n);
		if (w < 0)
			return x->err ? x->err : xfer_fail(x, (int)w, "put");
		x->pos += w;
		x->done += (uint64_t)w;
	}
	if (m->finish) {
		int r = m->finish(x);

		if (r)
			return x->err ? x->err : xfer_fail(x, r, "finish");
	}
	return 0;
}
