// SPDX-License-Identifier: MIT
/* The io_uring ring both uring methods drive; see uring_ring.h. */
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

int uring_probe_ops(char *why, size_t len, const int *ops,
			   const char *const *names, unsigned int n)
{
	struct io_uring_probe *pr;
	struct io_uring ring;
	size_t off = 0;
	unsigned int i;
	int r;

	r = io_uring_queue_init(2, &ring, 0);
	if (r)
		return kernel_uring_why(r, why, len);
	pr = io_uring_get_probe_ring(&ring);
	if (!pr) {
		snprintf(why, len, "io_uring cannot list its opcodes "
			 "(IORING_REGISTER_PROBE needs Linux 5.6)");
		r = -ENOSYS;
	}
	for (i = 0; pr && i < n; i++) {
		if (io_uring_opcode_supported(pr, ops[i]))
			continue;
		if (!off)
			off = (size_t)snprintf(why, len, "this kernel's io_uring "
					       "lacks");
		if (off < len)
			off += (size_t)snprintf(why + off, len - off, " %s",
						names[i]);
		r = -ENOSYS;
	}
	if (pr)
		io_uring_free_probe(pr);
	io_uring_queue_exit(&ring);
	return r;
}

struct io_uring_sqe *uring_sqe(struct dnd_xfer *x, enum uring_op op,
				      unsigned int i)
{
	struct uring_priv *p = x->priv;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);

	/* The ring has room for every request the pipeline can hold. */
	DND_BUG_ON(!sqe);
	io_uring_sqe_set_data64(sqe, URING_UD(op, i));
	p->due++;
	return sqe;
}

int uring_failed(struct dnd_xfer *x, int res, const char *op)
{
	if (res == -EAGAIN)	/* a splice that met SO_RCVTIMEO/SNDTIMEO */
		res = -ETIMEDOUT;
	return xfer_fail(x, res, op);
}

int uring_step(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;
	struct __kernel_timespec ts = {
		.tv_sec = p->wait_ms / 1000,
		.tv_nsec = (long long)(p->wait_ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;
	int r = 0;

	if (io_uring_sq_ready(&p->ring) || !io_uring_cq_ready(&p->ring)) {
		x->out.sc.calls[DND_SC_URING_ENTER]++;
		r = io_uring_submit_and_wait_timeout(&p->ring, &cqe, 1, &ts,
						     NULL);
		if (r == -EINTR)
			return io_stop_signal ? xfer_fail(x, -EINTR,
					"interrupted by signal") : 0;
		if (r == -ETIME)
			return xfer_fail(x, -ETIMEDOUT,
					 "waiting for io_uring completions");
		if (r < 0)
			return xfer_fail(x, r, "io_uring_enter");
		r = 0;
	}
	io_uring_for_each_cqe(&p->ring, head, cqe) {
		n++;
		p->due--;
		if (cqe->flags & IORING_CQE_F_MORE)
			p->due++;
		r = p->on_cqe(x, cqe);
		if (r)
			break;
	}
	io_uring_cq_advance(&p->ring, n);
	return r;
}

/* Cancels whatever is in flight and waits for it, up to about a second. */
static void uring_cancel_all(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;
	struct __kernel_timespec ts = { .tv_nsec = 100000000 };
	struct io_uring_cqe *cqe;
	unsigned int head, n, tries;

	io_uring_prep_cancel64(uring_sqe(x, URING_CANCEL, 0), 0,
			       IORING_ASYNC_CANCEL_ANY);
	for (tries = 0; p->due && tries < 10; tries++) {
		io_uring_submit_and_wait_timeout(&p->ring, &cqe, 1, &ts, NULL);
		n = 0;
		io_uring_for_each_cqe(&p->ring, head, cqe) {
			n++;
			p->due--;
			if (cqe->flags & IORING_CQE_F_MORE)
				p->due++;
		}
		io_uring_cq_advance(&p->ring, n);
	}
}

int uring_finish(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;
	int r = 0;

	while (!r && p->due)
		r = uring_step(x);
	return r;
}

void uring_teardown(struct dnd_xfer *x)
{
	struct uring_priv *p = x->priv;

	if (!p)
		return;
	if (p->ring_ok) {
		if (p->due)
			uring_cancel_all(x);
		io_uring_queue_exit(&p->ring);
	}
	pipe_close(&p->pipe);
	if (p->mem)
		io_buffers_free(p->mem, p->memlen, false);
	free(p);
	x->priv = NULL;
}

/* The ring and what both variants share; nslot buffers are added later. */
int uring_setup_ring(struct dnd_xfer *x, unsigned int nslot)
{
	unsigned int qd = x->cfg->qd ? x->cfg->qd : URING_QD_DEFAULT;
	struct timeval tv = { 0 };
	socklen_t l = sizeof(tv);
	struct uring_priv *p;
	int r;

	p = calloc(1, sizeof(*p) + nslot * sizeof(p->slot[0]));
	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->pipe.rd = p->pipe.wr = -1;
	p->nslot = nslot;
	p->off = p->out_off = (uint64_t)x->pos;
	r = io_uring_queue_init(2 * qd + 4, &p->ring, 0);
	if (r)
		return xfer_fail(x, r, "io_uring_queue_init");
	p->ring_ok = true;
	getsockopt(x->sock, SOL_SOCKET, x->cfg->sender ? SO_SNDTIMEO : SO_RCVTIMEO,
		   &tv, &l);
	p->wait_ms = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
	if (p->wait_ms <= 0)
		p->wait_ms = URING_WAIT_MS_DEFAULT;
	return 0;
}

#endif /* DND_HAVE_LIBURING */
