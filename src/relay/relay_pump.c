// SPDX-License-Identifier: MIT
/*
 * One direction of a relay flow: socket -> pooled pipe -> socket with
 * non-blocking splice [hap raw_sock.c], or through a buffer; and what a
 * broken socket or TCP urgent data do to it.
 */
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>		/* splice() */
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/net.h"
#include "relay/relay_flow.h"
#include "relay/relay_pump.h"

/*
 * Takes a pipe for a direction about to read; none left (--max-pipes, or
 * pipe() failed: EMFILE, ENFILE, ENOMEM) means this flow copies from now
 * on. Nothing is in flight then, so no byte changes path mid-stream.
 */
static void relay_dir_pipe(struct relay *r, struct relay_flow *f,
			   struct relay_dir *d)
{
	int e;

	if (d->pipe || d->count || f->copy || r->sh->mode != DND_RELAY_SPLICE)
		return;
	e = pipe_get(&r->pool, &d->pipe);
	if (!e)
		return;
	f->copy = true;
	r->st->fallbacks++;
	if (e != -ENOBUFS && !atomic_exchange(&r->sh->told_pipe, true))
		log_warn("relay: cannot open a pipe: %s; flows without one "
			 "copy instead (counted as fallbacks)", strerror(-e));
}

void relay_buf_put(struct relay *r, struct relay_dir *d)
{
	if (!d->buf)
		return;
	if (r->nbufs < DND_RELAY_BUF_CACHE)
		r->bufs[r->nbufs++] = d->buf;
	else
		free(d->buf);
	d->buf = NULL;
	d->off = 0;
}

void relay_bufs_free(struct relay *r)
{
	while (r->nbufs)
		free(r->bufs[--r->nbufs]);
}

/*
 * splice never reads past TCP urgent data [tcp_read_sock]: it stops at the
 * mark and then returns EAGAIN, or 0 once the FIN is in, with bytes still
 * queued. Sets *at_mark then; recv() reads past the mark (SO_OOBINLINE keeps
 * the urgent byte in the stream).
 */
static ssize_t relay_fill_pipe(struct relay *r, struct relay_dir *d, int src,
			       size_t *want, bool *at_mark)
{
	size_t room = d->pipe->size > d->count ? d->pipe->size - d->count : 0;
	ssize_t n;

	if (!room) {
		d->full = true;
		return -EAGAIN;
	}
	*want = r->o->splice_max && r->o->splice_max < room ?
		r->o->splice_max : room;
	n = splice(src, NULL, d->pipe->wr, NULL, *want,
		   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n > 0) {
		r->st->splice_in_calls++;
		r->st->splice_in_bytes += (uint64_t)n;
		return n;
	}
	if (n == -1 && errno != EAGAIN)
		return errno == EINTR ? -EINTR : -errno;
	if (net_at_mark(src) > 0 || (n == 0 && net_inq(src) > 0)) {
		*at_mark = true;
		if (d->count)
			d->full = true;	/* drain, then copy past the mark */
		return -EAGAIN;
	}
	if (n == 0)
		return 0;
	/*
	 * EAGAIN means "socket empty" or "pipe full", and the pipe's byte size
	 * cannot tell: it may be out of slots, one per skb fragment, long before
	 * it is out of bytes. The socket's queue tells.
	 */
	if (d->count && net_inq(src) > 0) {
		d->full = true;
		r->st->eagain_pipe_full++;
	} else {
		d->rd_ready = false;
		r->st->eagain_empty++;
	}
	return -EAGAIN;
}

static ssize_t relay_fill_buf(struct relay *r, struct relay_dir *d, int src,
			      size_t *want)
{
	size_t end = d->off + d->count;
	ssize_t n;

	if (!d->buf) {
		d->buf = r->nbufs ? r->bufs[--r->nbufs] :
				    malloc(r->o->buf_size);
		if (!d->buf)
			return -ENOMEM;
	}
	if (end >= r->o->buf_size) {
		d->full = true;
		return -EAGAIN;
	}
	*want = r->o->buf_size - end;
	n = recv(src, d->buf + end, *want, MSG_DONTWAIT);
	if (n > 0) {
		r->st->read_calls++;
		r->st->read_bytes += (uint64_t)n;
		return n;
	}
	if (n == 0)
		return 0;
	if (errno == EAGAIN) {
		d->rd_ready = false;
		r->st->eagain_empty++;
		return -EAGAIN;
	}
	return errno == EINTR ? -EINTR : -errno;
}

/*
 * Errors a peer or the network cause: that side is broken, and the flow
 * ends with a reset once the other side has what was sent. Any other errno
 * (ENOMEM, EBADF, ENOTSOCK, EINVAL, an impossible count) is the relay's own
 * failure, and relay_pump() returns it.
 */
static bool relay_peer_errno(int err)
{
	switch (-err) {
	case ECONNRESET:
	case ECONNREFUSED:
	case ECONNABORTED:
	case EPIPE:
	case ETIMEDOUT:
	case ENOTCONN:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETUNREACH:
	case ENETDOWN:
	case ENETRESET:
		return true;
	default:
		return false;
	}
}

/*
 * fd[s] broke: nothing more can be written to it, so what waits for it is
 * thrown away and its source no longer read. What fd[s] still holds to read
 * is forwarded (dir[s] reads on until 0 or the error).
 */
void relay_sock_broken(struct relay *r, struct relay_flow *f, int s, int err)
{
	struct relay_dir *d = &f->dir[!s];

	if (!f->err[s])
		f->err[s] = err;
	r->st->bytes_discarded += d->count;
	if (d->pipe)
		pipe_put(&r->pool, d->pipe, d->count);
	d->pipe = NULL;
	d->count = d->off = 0;
	d->eof = true;
	d->full = false;
}

/*
 * Source -> pipe or buffer. Returns bytes, 0 at EOF or when the source broke,
 * -EAGAIN, or -errno when the relay failed.
 */
static ssize_t relay_fill(struct relay *r, struct relay_flow *f, int i)
{
	struct relay_dir *d = &f->dir[i];
	bool at_mark = false;
	size_t want = 0;
	ssize_t n;

	relay_dir_pipe(r, f, d);
	if (d->pipe) {
		n = relay_fill_pipe(r, d, f->fd[i], &want, &at_mark);
		if (at_mark && !d->count) {
			/* The pipe is empty, so the order holds. */
			pipe_put(&r->pool, d->pipe, 0);
			d->pipe = NULL;
			r->st->urgent_copies++;
			n = relay_fill_buf(r, d, f->fd[i], &want);
		}
	} else {
		n = relay_fill_buf(r, d, f->fd[i], &want);
	}
	if (n == -EINTR || n == -EAGAIN)
		return -EAGAIN;
	if (n < 0 && !relay_peer_errno((int)n))
		return n;
	if (n <= 0) {
		/* A broken source ends the input like EOF; the flow fails
		 * once the other side has what came before. */
		if (n < 0)
			relay_sock_broken(r, f, i, (int)n);
		d->eof = true;
		return 0;
	}
	d->count += (size_t)n;
	/*
	 * A short read usually means the socket is empty, which saves the
	 * EAGAIN call; level-triggered epoll reports it again if it was not.
	 * After RDHUP a short read is not the end: read on until 0.
	 */
	if ((size_t)n < want && !d->rdhup)
		d->rd_ready = false;
	return n;
}

/* Pipe or buffer -> destination. Returns bytes, -EAGAIN, or -errno. */
static ssize_t relay_drain(struct relay *r, struct relay_flow *f, int i)
{
	struct relay_dir *d = &f->dir[i];
	int dst = f->fd[!i];
	ssize_t n;

	if (d->pipe)
		n = splice(d->pipe->rd, NULL, dst, NULL, d->count,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	else
		n = send(dst, d->buf + d->off, d->count,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n == -1 && errno == EAGAIN) {
		d->wr_blocked = true;
		r->st->eagain_out++;
		return -EAGAIN;
	}
	if (n == -1)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0 || (size_t)n > d->count)
		return -EIO;
	d->count -= (size_t)n;
	r->st->bytes[i] += (uint64_t)n;
	f->sent[i] += (uint64_t)n;
	if (d->pipe) {
		r->st->splice_out_calls++;
		r->st->splice_out_bytes += (uint64_t)n;
		d->full = false;
	} else {
		r->st->write_calls++;
		r->st->write_bytes += (uint64_t)n;
		d->off += (size_t)n;
		if (!d->count) {
			d->off = 0;
			d->full = false;
		}
	}
	return n;
}

/*
 * Fills and drains direction i until nothing moves or its byte budget for
 * this wakeup is spent (*spent), so one fast flow cannot starve the rest.
 * A broken socket is only marked (f->err). Returns 0, or -errno when the
 * relay itself failed.
 */
static int relay_pump_move(struct relay *r, struct relay_flow *f, int i,
			   size_t *spent)
{
	struct relay_dir *d = &f->dir[i];
	ssize_t n;

	for (;;) {
		bool moved = false;

		if (d->rd_ready && !d->eof && !d->full) {
			n = relay_fill(r, f, i);
			if (n < 0 && n != -EAGAIN)
				return (int)n;
			moved = n >= 0;
		}
		if (d->count && !d->wr_blocked) {
			n = relay_drain(r, f, i);
			if (n < 0 && n != -EAGAIN && !relay_peer_errno((int)n))
				return (int)n;
			if (n < 0 && n != -EAGAIN) {
				relay_sock_broken(r, f, !i, (int)n);
				return 0;
			}
			if (n > 0) {
				moved = true;
				*spent += (size_t)n;
			}
		}
		if (!moved || *spent >= r->budget)
			return 0;
	}
}

/*
 * EOF and an empty pipe: pass the FIN on, the other way keeps going. Never
 * after an error: a FIN would make a cut flow look complete.
 */
static int relay_pump_fin(struct relay *r, struct relay_flow *f, int i)
{
	struct relay_dir *d = &f->dir[i];
	int e;

	if (!d->eof || d->count || d->shut || f->err[0] || f->err[1])
		return 0;
	d->shut = true;
	if (shutdown(f->fd[!i], SHUT_WR) == 0)
		return 0;
	/*
	 * ENOTCONN: the destination is closed already (a reset or a timeout
	 * came in), so what was written to it may never have arrived.
	 */
	e = -errno;
	if (!relay_peer_errno(e))
		return e;
	relay_sock_broken(r, f, !i, e);
	return 0;
}

int relay_pump(struct relay *r, struct relay_flow *f, int i)
{
	struct relay_dir *d = &f->dir[i];
	size_t spent = 0;
	int e = relay_pump_move(r, f, i, &spent);

	if (d->pipe && !d->count) {
		pipe_put(&r->pool, d->pipe, 0);
		d->pipe = NULL;
	}
	if (d->buf && !d->count)
		relay_buf_put(r, d);
	if (!e)
		e = relay_pump_fin(r, f, i);
	if (spent && r->o->idle_timeout > 0) {
		f->last = r->el.now;
		relay_list_del(f);
		relay_list_add(&r->open, f);
	}
	return e;
}
