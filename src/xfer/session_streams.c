// SPDX-License-Identifier: MIT
/*
 * The receiver's connections (session_streams.h): stream 0 accepted and
 * opened (preambles, TLS), then every other stream, however it comes (the
 * one-shot listener, dnd serve's streams port, a pull's own connects),
 * each with a join that fits this transfer; their ranges tile the payload.
 */
#include <sys/socket.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hello.h"
#include "core/io.h"
#include "core/net.h"
#include "core/stats.h"
#include "xfer/session_link.h"
#include "xfer/session_streams.h"
#include "xfer/session_types.h"

/*
 * Accepts one connection, waiting at most secs (0: for ever) when more
 * than the first is awaited. Returns the fd or -errno.
 */
static int recv_accept_one(struct session *s, double secs, char *peer,
			   size_t len)
{
	struct pollfd pfd = { .fd = s->lfd, .events = POLLIN };
	int r, fd;

	r = poll(&pfd, 1, secs > 0 ? (int)(secs * 1000) : -1);
	if (r == 0)
		return -EAGAIN;
	if (r == -1)
		return -errno;
	fd = net_accept(s->lfd, peer, len);
	if (fd >= 0 && net_tune(fd, s->o->timeout)) {
		close(fd);
		return -errno;
	}
	return fd;
}

int session_refuse_other(struct session *s, const char *why)
{
	struct dnd_accept a = { .status = DND_ST_REFUSED };

	wire_other_mode(DND_OTHER_RECV, a.reason, sizeof(a.reason));
	if (!proto_send_accept(s->sock[0], &a))
		net_deliver(s->sock[0], 1);
	return session_fail(s, "%s", why);
}

/*
 * The opening of a one-shot stream. Keyed: preambles and TLS; a sender
 * without a key hears why in a refused accept, the one answer it reads.
 * Keyless: a keyed sender's preamble is answered and refused. 0 or 1.
 */
static int recv_hello(struct session *s, int fd)
{
	struct dnd_hello h = {
		.role = DND_WIRE_ONESHOT,
		.version = DND_WIRE_VERSION,
		.deadline = stats_now() + (s->o->timeout > 0 ? s->o->timeout :
					   DND_HELLO_TIMEOUT),
	};
	struct dnd_accept a = { .status = DND_ST_REFUSED };
	char why[320];
	int r;

	if (!s->o->tls) {
		r = hello_keyless_peek(fd, &h, why, sizeof(why));
		if (r == -EPROTOTYPE)
			return session_refuse_other(s, why);
		return r ? session_fail(s, "%s", why) : 0;
	}
	r = session_hello(s, fd, true, why, sizeof(why));
	if (r == -ENOPROTOOPT) {
		wire_mode_why(DND_WIRE_ONESHOT, false, DND_WIRE_NONE, a.reason,
			      sizeof(a.reason));
		if (!proto_send_accept(fd, &a))
			net_deliver(fd, 1);
	}
	return r ? session_fail(s, "%s", why) : 0;
}

int session_recv_first(struct session *s)
{
	int fd = recv_accept_one(s, 0, s->res.peer, sizeof(s->res.peer));

	if (fd == -EINTR)
		return session_fail(s, "interrupted by %s while waiting for "
				    "a sender", strsignal(io_stop_signal));
	if (fd < 0)
		return session_fail(s, "accept: %s", strerror(-fd));
	s->sock[0] = fd;
	io_stop_fd = fd;
	return recv_hello(s, fd);
}

/* Stream i's join: the right transfer, a range inside the payload. */
static int recv_join(struct session *s, int fd, struct dnd_join *j)
{
	char why[160];
	int r = proto_recv_join(fd, j, why, sizeof(why));

	if (r == -EBADMSG)
		return session_fail(s, "malformed stream from the peer: %s",
				    why);
	if (!r)
		r = session_bound(s, fd);
	if (r == -EACCES)
		return session_fail(s, "a stream of another session came (its "
				    "TLS binding differs): refused");
	if (r)
		return session_recv_failed(s, r, "stream's join",
					   s->o->timeout);
	/* A stream of unknown length is one range from 0, of length 0. */
	if (j->xfer_id != s->xfer_id || j->streams != s->n ||
	    (s->end.known && (j->offset < s->start ||
			      j->offset + j->len > s->end.len)) ||
	    (!s->end.known && (j->offset || j->len)))
		return session_fail(s, "malformed stream from the peer: a "
				    "join that does not fit this transfer");
	return 0;
}

/* The ranges of all streams tile [start, length) exactly. */
static int recv_ranges(struct session *s)
{
	uint64_t at = s->start;
	unsigned int i;

	if (!s->end.known)
		return 0;
	for (i = 0; i < s->n; i++) {
		if (s->join[i].offset != at)
			return session_fail(s, "malformed stream from the peer: "
					    "stream %u starts at %llu, not %llu",
					    i, (unsigned long long)
					    s->join[i].offset,
					    (unsigned long long)at);
		at += s->join[i].len;
	}
	if (at != s->end.len)
		return session_fail(s, "malformed stream from the peer: the "
				    "streams carry %llu of %llu bytes",
				    (unsigned long long)(at - s->start),
				    (unsigned long long)(s->end.len - s->start));
	return 0;
}

/*
 * A dnd serve client pulling over N streams: connects the others to the
 * server's streams port, each opened with a join of this transfer (no
 * range), then takes the server's join on every stream. 0 or 1.
 */
static int recv_pull_streams(struct session *s)
{
	unsigned int i;

	for (i = 1; i < s->n; i++) {
		s->join[i] = (struct dnd_join){
			.index = (uint16_t)i,
			.streams = (uint16_t)s->n,
			.xfer_id = s->xfer_id,
		};
		if (session_link_connect(s, i))
			return 1;
	}
	for (i = 0; i < s->n; i++)
		if (recv_join(s, s->sock[i], &s->join[i]) ||
		    s->join[i].index != i)
			return s->res.error[0] ? 1 : session_fail(s,
				"malformed stream from the peer: stream %u "
				"says it is stream %u", i, s->join[i].index);
	return 0;
}

/* Stream 0's join, on the connection the header came on. 0 or 1. */
static int recv_first_join(struct session *s)
{
	if (!recv_join(s, s->sock[0], &s->join[0]) && !s->join[0].index)
		return 0;
	return s->res.error[0] ? 1 : session_fail(s, "malformed stream from "
			"the peer: the first stream is not stream 0");
}

/* The other streams' joins, from the connections accepted (fd[1..n-1],
 * each placed in s->sock or closed). 0 or 1. */
static int recv_place_streams(struct session *s, const int *fd)
{
	struct dnd_join j;
	unsigned int i;
	int r = recv_first_join(s);

	for (i = 1; i < s->n; i++) {
		if (!r && (recv_join(s, fd[i], &j) || s->sock[j.index] >= 0))
			r = s->res.error[0] ? 1 : session_fail(s, "malformed "
				"stream from the peer: stream %u came twice",
				j.index);
		if (r) {
			chan_close(fd[i]);
			continue;
		}
		s->sock[j.index] = fd[i];
		s->join[j.index] = j;
	}
	return r;
}

/*
 * One-shot: the streams after the first come to the listener. The sender
 * connects them all before it sends any join, so every connection is
 * accepted first: reading stream 0's join meanwhile would leave them in
 * the listen queue, and those past its backlog would time out. 0 or 1.
 */
static int recv_accept_streams(struct session *s)
{
	int fd[DND_STREAMS_MAX];
	unsigned int got;
	char peer[96];

	for (got = 1; got < s->n; got++) {
		fd[got] = recv_accept_one(s, s->o->timeout, peer, sizeof(peer));
		if (fd[got] < 0)
			break;
		/* Keyed, the sender opens each before it connects the next. */
		if (s->o->tls && recv_hello(s, fd[got])) {
			chan_close(fd[got]);
			while (--got)
				chan_close(fd[got]);
			return 1;
		}
	}
	if (got == s->n)
		return recv_place_streams(s, fd);
	session_fail(s, "only %u of %u streams came: %s", got, s->n,
		     fd[got] == -EAGAIN ? "--timeout" : strerror(-fd[got]));
	while (--got)
		chan_close(fd[got]);
	return 1;
}

/* Every stream's join, from wherever its connection comes. 0 or 1. */
int session_recv_streams(struct session *s)
{
	const struct session_link *l = s->o->link;
	unsigned int i;
	int r;

	if (l && !l->server)
		r = recv_pull_streams(s);
	else if (l)	/* keyed, the client opens them all first */
		r = (s->n > 1 && session_link_streams(s, true)) ||
		    recv_first_join(s);
	else
		r = recv_accept_streams(s);
	if (r)
		return 1;
	for (i = 0; i < s->n; i++) {
		if (session_stream_fd(s, i))
			return 1;
		/*
		 * Our accept answered the header at once, so TCP takes this
		 * for an interactive flow and delays its ACKs (pingpong).
		 * For streaming that is cheaper: fewer ACKs for the sender to
		 * take (TCP_QUICKACK on every transfer cost 10-30%: rw -> rw
		 * at -b 64Ki -w 128Ki, 4 quiet rounds, 1227-1342 MB/s with it
		 * against 1633-2053 without; rw -> null at -b 1Mi -w 0,
		 * medians of 5, 1792 against 2513). A sender that reuses a
		 * buffer only once ACKs free it (SEND_ZC, MSG_ZEROCOPY) says
		 * so in its plan: it would wait up to 40 ms for each ACK.
		 */
		if (s->ack_now)
			net_quickack(s->sock[i]);
	}
	return recv_ranges(s);
}
