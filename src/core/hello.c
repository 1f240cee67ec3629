// SPDX-License-Identifier: MIT
/* A connection's opening: preambles, then TLS; see hello.h. */
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/chan.h"
#include "core/hello.h"
#include "core/io.h"
#include "core/net.h"
#include "core/stats.h"
#include "core/tls.h"

/* Moves exactly n bytes in one direction, each call non-blocking after a
 * poll, so that a blocking socket cannot outlive the deadline. */
static int hello_io(int fd, void *buf, size_t n, double deadline, bool out,
		    int flags)
{
	size_t done = 0;
	ssize_t r;
	int err;

	/* Through TLS: the socket's timeouts bound each call. */
	if (chan_tls(fd)) {
		err = net_tune(fd, deadline - stats_now());
		if (!err && deadline <= stats_now())
			err = -ETIMEDOUT;
		if (!err)
			err = out ? net_send_all(fd, buf, n) :
				    net_recv_all(fd, buf, n);
		return err == -EAGAIN ? -ETIMEDOUT : err;
	}
	while (done < n) {
		err = net_wait_by(fd, out ? POLLOUT : POLLIN, deadline);
		if (err)
			return err;
		if (out)
			r = send(fd, (char *)buf + done, n - done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			r = recv(fd, (char *)buf + done, n - done,
				 MSG_DONTWAIT | flags);
		if (r == 0 && !out)
			return -ENODATA;
		if (r == -1 && errno != EAGAIN && errno != EINTR)
			return -errno;
		/* A peek sees all that is queued each time: the whole or
		 * nothing counts. */
		if (r > 0 && flags & MSG_PEEK && (size_t)r < n)
			continue;
		if (r > 0)
			done += (size_t)r;
	}
	return 0;
}

int hello_recv_by(int fd, void *buf, size_t n, double deadline)
{
	return hello_io(fd, buf, n, deadline, false, 0);
}

int hello_send_by(int fd, const void *buf, size_t n, double deadline)
{
	return hello_io(fd, (void *)buf, n, deadline, true, 0);
}

/* Describes an I/O failure while waiting for or sending a preamble. */
static int hello_io_fail(int err, const struct dnd_hello *h, bool mine,
			 char *why, size_t len)
{
	const char *peer = h->role == DND_WIRE_ONESHOT ? "peer" :
			   mine ? "server" : "client";

	if (err == -ETIMEDOUT)
		snprintf(why, len, "handshake timed out at the %s's preamble",
			 peer);
	else if (err == -ENODATA)
		snprintf(why, len, "the %s closed the connection before its "
			 "preamble", peer);
	else
		snprintf(why, len, "handshake: %s", strerror(-err));
	return err;
}

/* Keeps fd's TLS session t on it (chan.h). 0, or -errno with t freed. */
static int hello_keep(int fd, struct dnd_tls *t, char *why, size_t len)
{
	int r = chan_attach(fd, t);

	if (r) {
		tls_free(t);
		snprintf(why, len, "cannot keep the TLS session: %s",
			 strerror(-r));
	}
	return r;
}

/* The opener's TLS on fd, kept on it. 0 or -errno. */
static int hello_tls(int fd, const struct dnd_hello *h, char *why,
		     size_t len)
{
	struct dnd_tls_cfg cfg = *h->tls;
	struct dnd_tls *t;
	int r;

	cfg.server = false;
	cfg.deadline = h->deadline;
	r = tls_open(&t, fd, &cfg, why, len);
	return r ? r : hello_keep(fd, t, why, len);
}

static void hello_pre(const struct dnd_hello *h, bool acceptor,
		      uint8_t out[DND_WIRE_PRE_LEN])
{
	struct dnd_wire_pre p = {
		.version = h->version,
		.mode = h->tls ? DND_WIRE_KEY : DND_WIRE_NONE,
	};

	wire_put_pre(out, acceptor, &p);
}

int hello_open(int fd, const struct dnd_hello *h, char *why, size_t len)
{
	uint8_t b[DND_WIRE_PRE_LEN];
	struct dnd_wire_pre p;
	int r;

	hello_pre(h, false, b);
	r = hello_send_by(fd, b, sizeof(b), h->deadline);
	if (!r)
		r = hello_recv_by(fd, b, sizeof(b), h->deadline);
	if (r)
		return hello_io_fail(r, h, true, why, len);
	r = wire_get_pre(b, true, h->role, h->version,
			 h->tls ? DND_WIRE_KEY : DND_WIRE_NONE, &p, why, len);
	if (r || !h->tls)
		return r;
	return hello_tls(fd, h, why, len);
}

void hello_acceptor_init(struct hello_acceptor *a, const struct dnd_hello *h)
{
	*a = (struct hello_acceptor){ .h = *h };
	hello_pre(h, true, a->mine);
}

void hello_acceptor_free(struct hello_acceptor *a)
{
	tls_free(a->tls);
	a->tls = NULL;
}

/* One non-blocking move of the preambles' bytes: 1 when some moved, 0 when
 * fd is not ready (*events set), or -errno (-ENODATA: the peer closed). */
static int hello_nb(int fd, uint8_t *buf, size_t n, bool out, short *events)
{
	ssize_t r = out ? send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL) :
			  recv(fd, buf, n, MSG_DONTWAIT);

	if (r > 0)
		return (int)r;
	if (r == 0)
		return -ENODATA;
	if (errno != EAGAIN && errno != EINTR)
		return -errno;
	*events = out ? POLLOUT : POLLIN;
	return 0;
}

int hello_accept_step(int fd, struct hello_acceptor *a, short *events,
		      char *why, size_t len)
{
	const struct dnd_hello *h = &a->h;
	struct dnd_wire_pre p;
	int r;

	while (a->got < sizeof(a->peer)) {
		r = hello_nb(fd, a->peer + a->got, sizeof(a->peer) - a->got,
			     false, events);
		if (r < 0)
			return hello_io_fail(r, h, false, why, len);
		if (!r)
			return -EAGAIN;
		a->got += (size_t)r;
	}
	r = wire_get_pre(a->peer, false, h->role, h->version,
			 h->tls ? DND_WIRE_KEY : DND_WIRE_NONE, &p, why, len);
	/* Not a dnd peer, or no preamble: it hears nothing from us. A
	 * one-shot sender at a server (-EPROTOTYPE) hears our preamble where
	 * it reads its receiver's accept, and learns what we are. */
	if (r == -EBADMSG || r == -ENOPROTOOPT)
		return r;
	/* Ours whatever we think of its: a peer of another version or mode
	 * learns ours. */
	while (a->sent < sizeof(a->mine)) {
		int s = hello_nb(fd, a->mine + a->sent,
				 sizeof(a->mine) - a->sent, true, events);

		if (!s)
			return -EAGAIN;
		if (s < 0 && r)
			return r;
		if (s < 0) {
			snprintf(why, len, "handshake: cannot send the "
				 "preamble");
			return -EPIPE;
		}
		a->sent += (size_t)s;
	}
	if (r || !h->tls)
		return r;
	if (!a->tls) {
		struct dnd_tls_cfg cfg = *h->tls;

		cfg.server = true;
		cfg.deadline = h->deadline;
		r = tls_start(&a->tls, fd, &cfg, why, len);
		if (r)
			return r;
	}
	return tls_step(a->tls, events, why, len);
}

int hello_accept_late(const struct hello_acceptor *a, char *why, size_t len)
{
	if (a->tls)
		snprintf(why, len, "TLS handshake timed out");
	else if (a->got < sizeof(a->peer))
		hello_io_fail(-ETIMEDOUT, &a->h, false, why, len);
	else
		snprintf(why, len, "handshake: cannot send the preamble");
	return -ETIMEDOUT;
}

int hello_accept(int fd, const struct dnd_hello *h, char *why, size_t len)
{
	struct hello_acceptor a;
	int fl = fcntl(fd, F_GETFL), r;
	short ev = 0;

	if (fl == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return hello_io_fail(-errno, h, false, why, len);
	hello_acceptor_init(&a, h);
	while ((r = hello_accept_step(fd, &a, &ev, why, len)) == -EAGAIN) {
		r = net_wait_by(fd, ev, h->deadline);
		if (r == -ETIMEDOUT)
			r = hello_accept_late(&a, why, len);
		else if (r)
			r = hello_io_fail(r, h, false, why, len);
		if (r)
			break;
	}
	fcntl(fd, F_SETFL, fl);
	if (!r && a.tls) {
		struct dnd_tls *t = a.tls;

		a.tls = NULL;
		r = hello_keep(fd, t, why, len);
	}
	hello_acceptor_free(&a);
	return r;
}

int hello_keyless_peek(int fd, const struct dnd_hello *h, char *why,
		       size_t len)
{
	uint8_t b[DND_WIRE_PRE_LEN];
	struct dnd_wire_pre p;
	int r = hello_io(fd, b, 4, h->deadline, false, MSG_PEEK);

	if (r || memcmp(b, "DNDa", 4))
		return 0;	/* the header's own read says what went wrong */
	r = hello_recv_by(fd, b, sizeof(b), h->deadline);
	if (!r)
		r = wire_get_pre(b, false, h->role, h->version, DND_WIRE_NONE,
				 &p, why, len);
	if (r == -EACCES || r == -EPROTO) {
		hello_pre(h, true, b);
		hello_send_by(fd, b, sizeof(b), h->deadline);
	}
	if (r == -EACCES || r == -EPROTO || r == -EBADMSG)
		return r;
	if (r) {
		snprintf(why, len, "a keyed sender's preamble: %s",
			 strerror(-r));
		return r;
	}
	/* A one-shot sender never opens keyless with a preamble: this is a
	 * dnd serve client. The caller says so with a refused accept. */
	return wire_other_mode(DND_OTHER_CLIENT, why, len);
}

/* Stream 0's binding token. 0 or -EINVAL. */
static int hello_token(int fd0, uint8_t out[DND_WIRE_TOKEN_LEN])
{
	const struct dnd_tls *t = chan_tls(fd0);
	char err[160];

	if (!t)
		return -EINVAL;
	return tls_export(t, DND_WIRE_TOKEN_LABEL, out, DND_WIRE_TOKEN_LEN,
			  err, sizeof(err));
}

int hello_token_send(int fd0, int fd)
{
	uint8_t tok[DND_WIRE_TOKEN_LEN];
	int r = hello_token(fd0, tok);

	return r ? r : net_send_all(fd, tok, sizeof(tok));
}

int hello_token_match(int fd0, const uint8_t got[DND_WIRE_TOKEN_LEN])
{
	uint8_t tok[DND_WIRE_TOKEN_LEN];
	int r = hello_token(fd0, tok);

	if (r)
		return r;
	return CRYPTO_memcmp(tok, got, sizeof(tok)) ? -EACCES : 0;
}

int hello_token_check(int fd0, int fd)
{
	uint8_t got[DND_WIRE_TOKEN_LEN];
	int r = net_recv_all(fd, got, sizeof(got));

	return r ? r : hello_token_match(fd0, got);
}
