// SPDX-License-Identifier: MIT
/*
 * uring-splice: IORING_OP_SPLICE source -> pipe -> socket, and socket ->
 * pipe -> sink (the 2010 "Splice status" thread's path, without a system call
 * each), on the ring of uring_ring.c. One splice into and one out of the pipe
 * in flight, never more than the pipe holds, so neither can wait on the other;
 * they run in io-wq worker threads, which shows as context switches.
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

static int uring_splice_probe(char *why, size_t len)
{
	static const int ops[] = { IORING_OP_SPLICE };
	static const char *const names[] = { "SPLICE (Linux 5.7)" };

	return uring_probe_ops(why, len, ops, names, 1);
}

static int uring_splice_check(const struct xfer_cfg *c, char *why,
			      size_t len)
{
	if (c->ep == DND_EP_STREAM && !S_ISFIFO(c->fmode) &&
	    !S_ISSOCK(c->fmode)) {
		snprintf(why, len, "uring-splice needs a file, pipe or socket "
			 "%s; use -m uring", c->sender ? "source" : "sink");
		return -EINVAL;
	}
	if (c->hash_stream) {
		snprintf(why, len, "uring-splice cannot hash a stream source "
			 "it never sees; use -m uring, rw or splice, or "
			 "--no-verify");
		return -EINVAL;
	}
	return 0;
}

static void uring_splice_queue(struct dnd_xfer *x, uint64_t base, size_t len)
{
	struct uring_priv *p = x->priv;
	int in = x->cfg->sender ? x->fd : x->sock;
	int out = x->cfg->sender ? x->sock : x->fd;
	struct io_uring_sqe *sqe;

	if (!p->in_flight && !p->eof && p->issued - base < len &&
	    p->in_pipe < p->pipe.size) {
		size_t want = p->pipe.size - p->in_pipe;

		if (want > p->len)
			want = p->len;
		if (want > len - (p->issued - base))
			want = len - (size_t)(p->issued - base);
		sqe = uring_sqe(x, URING_SPLICE_IN, 0);
		io_uring_prep_splice(sqe, in, x->cfg->sender && x->cfg->ep == DND_EP_FILE ?
				     (int64_t)p->off : -1, p->pipe.wr, -1,
				     (unsigned int)want, x->cfg->splice_flags);
		p->in_flight = true;
		p->in_want = want;
		p->issued += want;
	}
	if (!p->draining && p->in_pipe) {
		sqe = uring_sqe(x, URING_SPLICE_OUT, 0);
		io_uring_prep_splice(sqe, p->pipe.rd, -1, out,
				     !x->cfg->sender && x->cfg->ep == DND_EP_FILE ?
				     (int64_t)p->out_off : -1,
				     (unsigned int)p->in_pipe, x->cfg->splice_flags);
		p->draining = true;
	}
}

static int uring_splice_cqe(struct dnd_xfer *x,
			    const struct io_uring_cqe *cqe)
{
	struct uring_priv *p = x->priv;
	int res = cqe->res;

	if (cqe->user_data >> 32 == URING_SPLICE_IN) {
		p->in_flight = false;
		if (res < 0)
			return uring_failed(x, res, x->cfg->sender ? "io_uring splice "
					    "source->pipe" : "io_uring splice "
					    "socket->pipe");
		p->issued -= p->in_want - (size_t)res;
		p->in_pipe += (size_t)res;
		p->off += (uint64_t)res;
		p->eof = !res;
		if (!x->cfg->sender)
			x->out.sc.bytes[DND_SC_URING_ENTER] += (uint64_t)res;
	} else if (cqe->user_data >> 32 == URING_SPLICE_OUT) {
		p->draining = false;
		if (res <= 0)
			return uring_failed(x, res ? res : -EIO, x->cfg->sender ?
					    "io_uring splice pipe->socket" :
					    "io_uring splice pipe->sink");
		p->in_pipe -= (size_t)res;
		p->out_off += (uint64_t)res;
		p->returned += (uint64_t)res;
		if (x->cfg->sender)
			x->out.sc.bytes[DND_SC_URING_ENTER] += (uint64_t)res;
	}
	return 0;
}

static ssize_t uring_splice_move(struct dnd_xfer *x, size_t len)
{
	struct uring_priv *p = x->priv;
	uint64_t base = p->returned;
	int r;

	for (;;) {
		uring_splice_queue(x, base, len);
		if (p->returned > base)
			return (ssize_t)(p->returned - base);
		if (p->eof && !p->in_flight && !p->draining && !p->in_pipe)
			return 0;
		r = uring_step(x);
		if (r)
			return r;
	}
}

static int uring_splice_setup(struct dnd_xfer *x)
{
	struct uring_priv *p;
	int r = uring_setup_ring(x, 0);

	if (r)
		return r;
	p = x->priv;
	p->on_cqe = uring_splice_cqe;
	r = pipe_open(&p->pipe, x->cfg->pipe_size);
	if (r)
		return xfer_fail(x, r, "F_SETPIPE_SZ");
	x->out.pipe_got = p->pipe.size;
	p->len = x->cfg->bsz;
	x->out.eff_bsz = x->cfg->bsz;
	snprintf(x->out.detail, sizeof(x->out.detail), "IORING_OP_SPLICE %s -> pipe "
		 "-> %s, one splice in flight each way (io-wq)",
		 x->cfg->sender ? "source" : "socket", x->cfg->sender ? "socket" : "sink");
	return 0;
}

const struct dnd_method method_uring_splice = {
	.name = "uring-splice",
	.send_help = "io_uring SPLICE source -> pipe -> socket",
	.recv_help = "io_uring SPLICE socket -> pipe -> sink",
	.flags = DND_M_PIPE | DND_M_ZEROCOPY,
	.probe = uring_splice_probe,
	.check = uring_splice_check,
	.setup = uring_splice_setup,
	.send = uring_splice_move,
	.recv = uring_splice_move,
	.finish = uring_finish,
	.teardown = uring_teardown,
};

#endif /* DND_HAVE_LIBURING */
