// SPDX-License-Identifier: MIT
/*
 * The splice-relay behaviours from HAProxy's 2009 netdev thread ("tcp:
 * splice as many packets as possible at once"), checked live: non-blocking splice from a
 * loopback socket with Ethernet-sized segments queued, a full pipe's
 * EAGAIN, and SO_RCVLOWAT against epoll and splice.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "core/pipe.h"
#include "probe/probe_check.h"
#include "probe/probe_relay.h"

struct relay_live {
	struct probe_conn c;
	struct dnd_pipe p;
	long long mss;	  /* one full segment, from TCP_INFO */
	long long queued; /* at the receiver once the sender stopped */
};

static void relay_close(struct relay_live *s)
{
	pipe_close(&s->p);
	probe_conn_close(&s->c);
}

/* Ethernet-sized segments queued on the receiver, and a pipe of pipe_want
 * bytes (0: the default 16 slots). Fails -EAGAIN unless min_segs queued. */
static int relay_open(struct relay_live *s, size_t send, unsigned int pipe_want,
		     long long min_segs, struct probe_result *r)
{
	int e = probe_conn_open(&s->c, DND_PROBE_MSS, DND_PROBE_RCVBUF, r);

	s->p.rd = s->p.wr = -1;
	if (e)
		return e;
	if ((e = probe_pipe_nb(&s->p, pipe_want, r))) {
		probe_conn_close(&s->c);
		return e;
	}
	s->queued = probe_conn_queue(&s->c, send);
	s->mss = probe_conn_mss(&s->c);
	if (s->mss <= 0 || s->queued < min_segs * s->mss) {
		relay_close(s);
		return probe_res(r, -EAGAIN,
				 "inconclusive: only %lld bytes "
				 "queued on the loopback socket (MSS %lld), "
				 "fewer than %lld segments",
				 s->queued, s->mss, min_segs);
	}
	return 0;
}

/* (a) Willy Tarreau's 2009 fix: before it, a non-blocking tcp_splice_read()
 * returned after one segment whatever len asked for. */
int probe_splice_relay_a(struct probe_result *r)
{
	struct relay_live s;
	ssize_t n;
	int e = relay_open(&s, 512 << 10, DND_PROBE_BIGPIPE, 8, r);

	if (e)
		return e;
	r->val[0] = s.mss;
	r->val[1] = s.queued;
	n = splice(s.c.srv, NULL, s.p.wr, NULL, s.p.size, DND_PROBE_SPLICE);
	if (n == -1)
		e = probe_res(r, -errno, "splice(socket -> pipe): %s",
			      strerror(errno));
	else
		e = probe_res(
			r, n > s.mss ? 0 : -EOPNOTSUPP,
			"one non-blocking splice(socket -> %u-byte pipe) "
			"took %zd bytes = %.1f segments of MSS %lld, with "
			"%lld bytes queued",
			s.p.size, n, (double)n / (double)s.mss, s.mss,
			s.queued);
	r->val[2] = n;
	relay_close(&s);
	return e;
}

/* (b) Eric Dumazet saw splice(len 1000) return 1460 once the fix above
 * let tcp_read_sock() go on past len. */
int probe_splice_relay_b(struct probe_result *r)
{
	struct relay_live s;
	long long low = LLONG_MAX, max = 0, calls = 0;
	int e = relay_open(&s, 256 << 10, DND_PROBE_BIGPIPE, 32, r);

	if (e)
		return e;
	for (; calls < 32; calls++) {
		long long q = net_inq(s.c.srv);
		ssize_t n;

		if (q < low)
			low = q;
		n = splice(s.c.srv, NULL, s.p.wr, NULL, 1000, DND_PROBE_SPLICE);
		if (n == -1) {
			e = probe_res(r, -errno,
				      "splice(socket -> pipe, 1000) "
				      "call %lld: %s",
				      calls + 1, strerror(errno));
			break;
		}
		if (n > max)
			max = n;
		probe_pipe_empty(&s.p); /* so the pipe never limits a call */
	}
	r->val[0] = 1000;
	r->val[1] = max;
	r->val[2] = calls;
	r->val[3] = low;
	if (!e)
		e = probe_res(r, max <= 1000 ? 0 : -EOPNOTSUPP,
			      "%lld calls of splice(socket -> pipe, len 1000) "
			      "with at least %lld bytes queued (MSS %lld): the "
			      "largest returned %lld",
			      calls, low, s.mss, max);
	relay_close(&s);
	return e;
}

/* Empties pipe and socket, then splices once more: an empty socket. */
static int relay_empty_errno(struct relay_live *s)
{
	probe_pipe_empty(&s->p);
	probe_conn_drain(&s->c);
	if (splice(s->c.srv, NULL, s->p.wr, NULL, 65536,
		   DND_PROBE_SPLICE) != -1)
		return 0;
	return errno;
}

/* (c) Willy Tarreau's question in that thread: a full pipe and an empty socket both
 * answer EAGAIN, so EAGAIN alone cannot say whether to wait for POLLIN or
 * to drain the pipe first. */
int probe_splice_relay_c(struct probe_result *r)
{
	struct relay_live s;
	ssize_t n = 0;
	int e = relay_open(&s, 512 << 10, 0, 32, r), err, i, readable;

	if (e)
		return e;
	for (i = 0; i < 64 && n != -1; i++)
		n = splice(s.c.srv, NULL, s.p.wr, NULL, 1 << 20,
			   DND_PROBE_SPLICE);
	err = n == -1 ? errno : 0;
	readable = probe_wait_fd(s.c.srv, POLLIN, -1, 0);
	r->val[0] = net_inq(s.p.rd);
	r->val[1] = net_inq(s.c.srv);
	r->val[2] = err;
	if (err != EAGAIN || r->val[1] <= 0)
		e = probe_res(r, err == EAGAIN ? -EAGAIN : -EOPNOTSUPP,
			      "after %d splices into a %u-byte pipe holding "
			      "%lld bytes, with %lld left on the socket: %s",
			      i, s.p.size, r->val[0], r->val[1],
			      err ? strerror(err) : "no error");
	else {
		r->val[3] = relay_empty_errno(&s);
		e = probe_res(
			r, 0,
			"pipe full (%u slots of F_GETPIPE_SZ %u "
			"hold %lld bytes) while the socket held %lld "
			"bytes and polled %s: "
			"splice returned EAGAIN; an empty socket gives %s "
			"- the ambiguity HAProxy lives with: only the "
			"pipe's fill level tells them apart",
			s.p.size / (unsigned int)sysconf(_SC_PAGESIZE),
			s.p.size, r->val[0], r->val[1],
			readable == 1 ? "readable" : "NOT readable",
			r->val[3] == EAGAIN ? "EAGAIN too"
					    : strerror((int)r->val[3]));
	}
	relay_close(&s);
	return e;
}

/* Queues n more bytes, then asks epoll (level-triggered) once. */
static int lowat_step(struct probe_conn *c, int ep, size_t n, int ms,
		      long long *queued)
{
	*queued = probe_conn_queue(c, n);
	return probe_wait_fd(-1, 0, ep, ms);
}

/* (d) Eric Dumazet's wish in that thread: SO_RCVLOWAT should cut wakeups. It
 * gates poll/epoll readiness (tcp_poll), but splice does not read it as a
 * target: a splice after the wakeup takes whatever is queued. */
int probe_splice_relay_d(struct probe_result *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct probe_conn c;
	struct dnd_pipe p;
	long long below = 0, at = 0;
	int lowat = 65536, nb, na, e, ep, serr = 0;
	ssize_t n = -1;

	if ((e = probe_conn_open(&c, DND_PROBE_MSS, DND_PROBE_RCVBUF, r)))
		return e;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep == -1 || (e = probe_pipe_nb(&p, DND_PROBE_BIGPIPE, r))) {
		e = e ? e
		      : probe_res(r, -errno, "epoll_create1: %s",
				  strerror(errno));
		goto out;
	}
	if (setsockopt(c.srv, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)) ==
		    -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, c.srv, &ev) == -1) {
		e = probe_res(r, -errno, "SO_RCVLOWAT or epoll_ctl: %s",
			      strerror(errno));
		goto out_pipe;
	}
	nb = lowat_step(&c, ep, (size_t)lowat / 2, 50, &below);
	na = lowat_step(&c, ep, (size_t)lowat, DND_PROBE_WAIT_MS, &at);
	if (na == 1)
		n = splice(c.srv, NULL, p.wr, NULL, p.size, DND_PROBE_SPLICE);
	if (na == 1 && n == -1)
		serr = errno;
	r->val[0] = lowat;
	r->val[1] = nb;
	r->val[2] = na;
	r->val[3] = n;
	if (nb < 0 || na < 0)
		e = probe_res(r, nb < 0 ? nb : na, "epoll_wait: %s",
			      strerror(nb < 0 ? -nb : -na));
	else if (serr)
		e = probe_res(r, -serr,
			      "splice(socket -> pipe) after the wakeup: %s",
			      strerror(serr));
	else
		e = probe_res(
			r, nb == 0 && na == 1 && n > 0 ? 0 : -EOPNOTSUPP,
			"SO_RCVLOWAT %d: with %lld bytes queued epoll said %s; "
			"with %lld, %s; one splice then took %zd bytes (splice "
			"takes what is queued: the mark gates only the wakeup)",
			lowat, below, nb ? "ready (not delayed)" : "not ready",
			at, na == 1 ? "ready" : "still not ready", n);
out_pipe:
	pipe_close(&p);
out:
	if (ep != -1)
		close(ep);
	probe_conn_close(&c);
	return e;
}
