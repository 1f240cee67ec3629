// SPDX-License-Identifier: MIT
/*
 * The core loop: asks the method to move bounded pieces, handles the ends of
 * the data and every way a run can stop early. Timing and the protocol
 * messages around the payload live in cmd_xfer.c.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "core/io.h"
#include "core/log.h"
#include "xfer/method.h"
#include "core/proto.h"
#include "xfer/xfer.h"

/* Largest piece asked of a method at once; methods bound it further. */
#define XFER_PIECE_MAX	(1UL << 30)

void xfer_init(struct dnd_xfer *x, const struct dnd_method *m, bool sender,
	       int sock, int fd)
{
	memset(x, 0, sizeof(*x));
	x->m = m;
	x->sender = sender;
	x->sock = sock;
	x->fd = fd;
	x->length = UINT64_MAX;
}

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

static void xfer_progress(struct dnd_xfer *x)
{
	double now, rate;
	char eta[32] = "";

	if (!x->progress)
		return;
	now = stats_now();
	if (now < x->progress_next)
		return;
	if (!x->progress_next) {
		x->t0 = now;
		x->progress_next = now + 0.25;
		return;
	}
	x->progress_next = now + 0.25;
	rate = (double)x->done / (now - x->t0);
	if (x->length != UINT64_MAX && x->length && rate > 0)
		snprintf(eta, sizeof(eta), " (%.0f%%), ETA %.0f s",
			 100.0 * (double)x->done / (double)x->length,
			 (double)(x->length - x->done) / rate);
	fprintf(stderr, "\r\033[K%s %.1f MiB at %.1f MB/s%s",
		x->sender ? "sent" : "received",
		(double)x->done / 1048576.0, rate / 1e6, eta);
}

static void xfer_progress_end(struct dnd_xfer *x)
{
	if (x->progress && x->progress_next)
		fprintf(stderr, "\r\033[K");
}

/*
 * Accounts n bytes moved. With --sync stream a receiver starts writeback of
 * each sync_every bytes behind it (sync_file_range does not wait), so the
 * disk works while the network does and the final fdatasync has little
 * left; without it all writeback waits for that fdatasync.
 */
static int xfer_advance(struct dnd_xfer *x, ssize_t n)
{
	int r;

	x->done += (uint64_t)n;
	x->pos += n;
	xfer_progress(x);
	if (!x->sync_every || x->sender || x->ep != DND_EP_FILE ||
	    (uint64_t)(x->pos - x->synced) < x->sync_every)
		return 0;
	r = io_sync_range(&x->sc, x->fd, x->synced, x->pos - x->synced);
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
	return xfer_fail(x, (int)r, x->sender ? "send" : "receive");
}

/* Moves exactly len bytes with the method, or fails. */
static int xfer_move(struct dnd_xfer *x, uint64_t len)
{
	uint64_t left = len;

	while (left) {
		size_t piece = left > XFER_PIECE_MAX ? XFER_PIECE_MAX : left;
		ssize_t r;

		if (io_stop_signal)
			return xfer_fail(x, -EINTR, "interrupted by signal");
		r = x->sender ? x->m->send(x, piece) : x->m->recv(x, piece);
		if (r < 0)
			return x->err ? x->err : xfer_hook_failed(x, r);
		if (r == 0)
			return xfer_fail(x, -ENODATA, x->sender ?
					 "source ended early" :
					 "peer closed early");
		DND_BUG_ON((uint64_t)r > piece);
		left -= (uint64_t)r;
		r = xfer_advance(x, r);
		if (r)
			return (int)r;
	}
	return 0;
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

static int xfer_put_seg(struct dnd_xfer *x, uint64_t n)
{
	uint8_t b[DND_SEG_HDR_LEN];
	int r;

	proto_put_seg(b, n);
	r = io_write_all(&x->sc, x->sock, b, sizeof(b));
	return r ? xfer_fail(x, r, "send segment header") : 0;
}

int xfer_send_payload(struct dnd_xfer *x, uint64_t len, bool known)
{
	int r = 0;

	x->length = known ? len : UINT64_MAX;
	if (known) {
		r = xfer_move(x, len);
		xfer_progress_end(x);
		return r;
	}
	for (;;) {
		uint64_t n = 0;

		r = xfer_stream_avail(x, &n);
		if (r)
			break;
		if (n > DND_SEG_MAX)
			n = DND_SEG_MAX;
		r = xfer_put_seg(x, n);
		if (r || !n)
			break;
		r = xfer_move(x, n);
		if (r)
			break;
	}
	xfer_progress_end(x);
	return r;
}

static int xfer_get_seg(struct dnd_xfer *x, uint64_t *n)
{
	uint8_t b[DND_SEG_HDR_LEN];
	ssize_t r;

	r = io_recv(&x->sc, x->sock, b, sizeof(b), MSG_WAITALL);
	if (r < 0)
		return xfer_hook_failed(x, r);
	if (r != (ssize_t)sizeof(b))
		return xfer_fail(x, -ENODATA, "peer closed early");
	if (proto_get_seg(b, n))
		return xfer_fail(x, -EBADMSG, "bad segment length from peer");
	return 0;
}

int xfer_recv_payload(struct dnd_xfer *x, uint64_t len, bool known)
{
	int r = 0;

	x->length = known ? len : UINT64_MAX;
	if (known) {
		r = xfer_move(x, len);
		xfer_progress_end(x);
		return r;
	}
	for (;;) {
		uint64_t n;

		r = xfer_get_seg(x, &n);
		if (r || !n)
			break;
		r = xfer_move(x, n);
		if (r)
			break;
	}
	xfer_progress_end(x);
	return r;
}

int xfer_move_until_eof(struct dnd_xfer *x)
{
	for (;;) {
		ssize_t r;

		if (io_stop_signal)
			return xfer_fail(x, -EINTR, "interrupted by signal");
		r = x->sender ? x->m->send(x, XFER_PIECE_MAX) :
				x->m->recv(x, XFER_PIECE_MAX);
		if (r < 0)
			return x->err ? x->err : xfer_hook_failed(x, r);
		if (r == 0)
			break;
		r = xfer_advance(x, r);
		if (r)
			return (int)r;
	}
	xfer_progress_end(x);
	return 0;
}
