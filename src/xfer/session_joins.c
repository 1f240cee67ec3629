// SPDX-License-Identifier: MIT
/*
 * dnd serve's streams port (session_link.h): the other streams of a
 * session come to a listener of its own, where anyone who can reach it may
 * connect. So every connection is opened (preambles, TLS, the join and its
 * token) at once, one non-blocking step a poll, each by its own short
 * deadline: silent strangers cost a slot each, never the real streams'
 * turn.
 */
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hello.h"
#include "core/io.h"
#include "core/net.h"
#include "core/stats.h"
#include "xfer/session_link.h"
#include "xfer/session_types.h"

#define JOINS_MAX	DND_STREAMS_MAX	/* being opened at once; the
					 * oldest is dropped for a newer */

struct joining {
	int fd;			/* non-blocking until it is placed */
	double by;
	short events;
	bool opened;		/* the preambles and TLS are through */
	struct hello_acceptor hs;
	uint8_t b[DND_JOIN_LEN + DND_WIRE_TOKEN_LEN];
	size_t got;
};

struct joins {
	struct session *s;
	struct joining j[JOINS_MAX];
	unsigned int n, got, dropped, outside;
	bool ranges;
};

static void joins_drop(struct joins *js, unsigned int i)
{
	struct joining *j = &js->j[i];

	hello_acceptor_free(&j->hs);
	chan_close(j->fd);
	js->j[i] = js->j[--js->n];
}

/* Takes one connection from the listener, if --allow has its peer. */
static int joins_accept(struct joins *js, double end)
{
	const struct session_link *l = js->s->o->link;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct dnd_hello h;
	struct joining *j;
	double by = stats_now() + DND_HELLO_TIMEOUT;
	int fd = accept4(js->s->lfd, (struct sockaddr *)&ss, &sl,
			 SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd == -1)
		return errno == EAGAIN || errno == EINTR ||
		       errno == ECONNABORTED ? 0 : -errno;
	if (l->allowed && !l->allowed(l, (struct sockaddr *)&ss, sl)) {
		close(fd);
		js->outside++;
		return 0;
	}
	if (js->n == JOINS_MAX) {
		unsigned int i, old = 0;

		for (i = 1; i < js->n; i++)
			if (js->j[i].by < js->j[old].by)
				old = i;
		joins_drop(js, old);
		js->dropped++;
	}
	h = session_hello_cfg(js->s, by < end ? by : end);
	j = &js->j[js->n++];
	*j = (struct joining){ .fd = fd, .by = h.deadline, .events = POLLIN };
	hello_acceptor_init(&j->hs, &h);
	return 0;
}

/* The join's bytes (and, keyed, its token) as far as fd has them. 0 when
 * all came, -EAGAIN, or -errno. */
static int joins_read(struct joining *j, size_t want)
{
	ssize_t r;

	while (j->got < want) {
		r = chan_tls(j->fd) ? chan_read(j->fd, j->b + j->got,
						want - j->got) :
			recv(j->fd, j->b + j->got, want - j->got,
			     MSG_DONTWAIT);
		if (r == 0)
			return -ENODATA;
		if (r < 0 && errno == EINTR && !chan_tls(j->fd))
			continue;
		if (r < 0)
			return chan_tls(j->fd) ? (int)r : -errno;
		j->got += (size_t)r;
	}
	return 0;
}

/*
 * One step of connection i: 0 while it goes on (or was dropped: no key,
 * another session's, too slow), 1 once it is a stream of ours (placed),
 * -1 when the transfer fails (a bound join that does not fit it).
 */
static int joins_step(struct joins *js, unsigned int i)
{
	struct session *s = js->s;
	struct joining *j = &js->j[i];
	size_t want = DND_JOIN_LEN + (s->o->tls ? DND_WIRE_TOKEN_LEN : 0);
	struct dnd_join d;
	char why[320];
	int r = 0;

	if (!j->opened) {
		r = hello_accept_step(j->fd, &j->hs, &j->events, why,
				      sizeof(why));
		if (!r && j->hs.tls) {
			r = chan_attach(j->fd, j->hs.tls);
			if (!r)
				j->hs.tls = NULL;
		}
		j->opened = !r;
	}
	if (j->opened) {
		r = joins_read(j, want);
		j->events = POLLIN;
	}
	if (r == -EAGAIN)
		return 0;
	if (!r && s->o->tls)
		r = hello_token_match(s->sock[0], j->b + DND_JOIN_LEN);
	if (r) {
		joins_drop(js, i);
		js->dropped++;
		return 0;
	}
	if (proto_get_join(j->b, &d, why, sizeof(why)) ||
	    d.xfer_id != s->xfer_id || d.streams != s->n || !d.index ||
	    s->sock[d.index] >= 0) {
		session_fail(s, "malformed stream from the peer: a join that "
			     "does not fit this transfer");
		return -1;
	}
	fcntl(j->fd, F_SETFL, fcntl(j->fd, F_GETFL) & ~O_NONBLOCK);
	if (net_tune(j->fd, s->o->timeout)) {
		session_fail(s, "cannot set socket options: %s",
			     strerror(errno));
		return -1;
	}
	s->sock[d.index] = j->fd;
	if (js->ranges)
		s->join[d.index] = d;
	js->got++;
	js->j[i] = js->j[--js->n];
	return 1;
}

/* A round: the poll (until the nearest deadline), then what it found. 0,
 * or 1 when the transfer fails. */
static int joins_round(struct joins *js, double end)
{
	struct pollfd p[1 + JOINS_MAX];
	double now = stats_now(), next = end;
	unsigned int i, n = js->n;
	int r, st;

	p[0] = (struct pollfd){ .fd = js->s->lfd, .events = POLLIN };
	for (i = 0; i < n; i++) {
		p[1 + i] = (struct pollfd){ .fd = js->j[i].fd,
					    .events = js->j[i].events };
		if (js->j[i].by < next)
			next = js->j[i].by;
	}
	r = poll(p, 1 + n, next > now ? (int)((next - now) * 1000) + 1 : 0);
	if (r < 0 && errno != EINTR)
		return session_fail(js->s, "poll: %s", strerror(errno));
	if (io_stop_signal)
		return session_fail(js->s, "interrupted by %s while waiting "
				    "for streams", strsignal(io_stop_signal));
	now = stats_now();
	/* From the last: a step may move the last entry into slot i. */
	for (i = n; i-- > 0;) {
		if (r > 0 && p[1 + i].revents) {
			st = joins_step(js, i);
			if (st < 0)
				return 1;
			if (st)
				continue;
		}
		if (i < js->n && js->j[i].fd == p[1 + i].fd &&
		    now >= js->j[i].by) {
			joins_drop(js, i);
			js->dropped++;
		}
	}
	if (p[0].revents && js->got + 1 < js->s->n)
		return joins_accept(js, end) ? session_fail(js->s, "accept: "
			"%s", strerror(errno)) : 0;
	return 0;
}

int session_link_streams(struct session *s, bool ranges)
{
	double end = stats_now() + (s->o->timeout > 0 ? s->o->timeout : 60);
	struct joins *js = calloc(1, sizeof(*js));
	int r = 0;

	if (!js)
		return session_fail(s, "out of memory");
	js->s = s;
	js->ranges = ranges;
	while (!r && js->got + 1 < s->n) {
		if (stats_now() >= end)
			r = session_fail(s, "only %u of %u streams came: "
					 "--timeout", js->got + 1, s->n);
		else
			r = joins_round(js, end);
	}
	while (js->n)
		joins_drop(js, 0);
	if (!r && (js->dropped || js->outside) && !s->res.warning[0])
		snprintf(s->res.warning, sizeof(s->res.warning), "dropped %u "
			 "connection(s) to the streams port from outside "
			 "--allow and %u without the key or of another "
			 "session", js->outside, js->dropped);
	free(js);
	if (r)
		return 1;
	close(s->lfd);
	s->lfd = -1;
	return 0;
}
