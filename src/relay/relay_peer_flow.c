// SPDX-License-Identifier: MIT
/*
 * One flow of the relay's load generator: its header, the pattern it sends
 * and checks byte for byte, its epoll interest, and how it ends.
 */
#include <sys/socket.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/net.h"
#include "relay/evloop.h"
#include "relay/relay_peer_flow.h"

#define DND_PEER_MAGIC "dndrly01"
#define DND_PEER_BUDGET (1u << 20)	/* bytes per flow per wakeup */
#define DND_PEER_F_AFTER_EOF 0x1u

static uint32_t peer_phase(uint32_t id, int dir)
{
	return (uint32_t)(((uint64_t)id * 2 + (uint64_t)dir) * 7919u %
			  DND_PEER_PERIOD);
}

int peer_live_add(struct peer *p, struct peer_conn *c)
{
	if (p->nlive == p->cap) {
		unsigned int cap = p->cap ? 2 * p->cap : 64;
		struct peer_conn **n = realloc(p->live, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->live = n;
		p->cap = cap;
	}
	c->slot = p->nlive;
	p->live[p->nlive++] = c;
	return 0;
}

static void peer_end(struct peer *p, struct peer_conn *c, bool ok)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (c->fd >= 0) {
		evloop_del(&p->el, c->fd);
		if (!ok)
			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg,
				   sizeof(lg));
		close(c->fd);
	}
	p->live[c->slot] = p->live[--p->nlive];
	p->live[c->slot]->slot = c->slot;
	if (ok)
		p->res->ok++;
	else
		p->res->failed++;
	p->t_last = p->el.now;
	free(c);
	if (p->o->count && p->res->ok + p->res->failed >= p->o->count)
		p->stop = true;
	if (!p->sink && !p->nlive)
		p->stop = true;
}

void peer_fail(struct peer *p, struct peer_conn *c, const char *fmt,
		      ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->res->error[0])
		snprintf(p->res->error, sizeof(p->res->error), "%s flow %u: %s",
			 p->sink ? "sink" : "client", c->id, msg);
	peer_end(p, c, false);
}

void peer_conn_client(struct peer *p, struct peer_conn *c, uint32_t id,
		      uint64_t tx, uint64_t rx)
{
	uint32_t w;
	uint64_t v;

	c->p = p;
	c->id = id;
	c->tx_len = tx;
	c->rx_len = rx;
	c->tx_phase = peer_phase(id, 0);
	c->rx_phase = peer_phase(id, 1);
	memcpy(c->hdr, DND_PEER_MAGIC, 8);
	w = htole32(id);
	memcpy(c->hdr + 8, &w, 4);
	w = htole32(p->o->after_eof ? DND_PEER_F_AFTER_EOF : 0);
	memcpy(c->hdr + 12, &w, 4);
	v = htole64(tx);
	memcpy(c->hdr + 16, &v, 8);
	v = htole64(rx);
	memcpy(c->hdr + 24, &v, 8);
}

/* Sink: the header tells the flow's id and both lengths. */
static int peer_parse_hdr(struct peer_conn *c)
{
	uint64_t v;
	uint32_t w;

	if (memcmp(c->hdr, DND_PEER_MAGIC, 8))
		return -EPROTO;
	memcpy(&w, c->hdr + 8, 4);
	c->id = le32toh(w);
	memcpy(&w, c->hdr + 12, 4);
	c->flags = le32toh(w);
	memcpy(&v, c->hdr + 16, 8);
	c->rx_len = le64toh(v);
	memcpy(&v, c->hdr + 24, 8);
	c->tx_len = le64toh(v);
	c->rx_phase = peer_phase(c->id, 0);
	c->tx_phase = peer_phase(c->id, 1);
	c->hdr_ok = true;
	return 0;
}

static bool peer_may_send(const struct peer_conn *c)
{
	if (c->tx_shut || c->connecting)
		return false;
	if (!c->p->sink)
		return true;
	return c->hdr_ok && (!(c->flags & DND_PEER_F_AFTER_EOF) || c->rx_eof);
}

/*
 * shutdown() on a socket that a reset has closed fails with ENOTCONN, while
 * the reset itself waits in SO_ERROR: report the cause, not the symptom.
 */
static int peer_closed_err(int fd, int err)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (err == ENOTCONN &&
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e)
		err = e;
	return -err;
}

/* Sends header and payload up to the budget. Returns 0 or -errno. */
static int peer_tx(struct peer *p, struct peer_conn *c)
{
	size_t budget = DND_PEER_BUDGET;
	ssize_t n;

	while (budget && peer_may_send(c)) {
		if (!p->sink && c->hdr_n < DND_PEER_HDR) {
			n = send(c->fd, c->hdr + c->hdr_n,
				 DND_PEER_HDR - c->hdr_n,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				c->hdr_n += (size_t)n;
		} else if (c->tx_n < c->tx_len) {
			uint64_t left = c->tx_len - c->tx_n;
			size_t len = left < DND_PEER_CHUNK ? left :
							    DND_PEER_CHUNK;
			size_t off = (c->tx_phase + c->tx_n) % DND_PEER_PERIOD;

			bool hold = p->o->pause && !p->sink && !p->resumed;

			if (hold && c->tx_n >= c->tx_len / 2) {
				if (!c->halted)
					p->halted++;
				c->halted = true;
				return 0;
			}
			/* A flow shorter than two chunks halts halfway too. */
			if (hold && len > c->tx_len / 2 - c->tx_n)
				len = (size_t)(c->tx_len / 2 - c->tx_n);
			n = send(c->fd, p->pat + off, len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				c->tx_n += (uint64_t)n;
				p->res->sent += (uint64_t)n;
				budget -= (size_t)n < budget ? (size_t)n : budget;
			}
		} else {
			if (shutdown(c->fd, SHUT_WR) == -1)
				return peer_closed_err(c->fd, errno);
			c->tx_shut = true;
			return 0;
		}
		if (n == -1)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		p->progress = p->el.now;
	}
	return 0;
}

/* Checks n received bytes; returns 0 or the offset + 1 of the first bad. */
static uint64_t peer_check(const struct peer *p, const struct peer_conn *c,
			   size_t n)
{
	size_t off = (c->rx_phase + c->rx_n) % DND_PEER_PERIOD, i;

	if (!memcmp(p->rbuf, p->pat + off, n))
		return 0;
	for (i = 0; i < n && p->rbuf[i] == p->pat[off + i]; i++)
		;
	return c->rx_n + i + 1;
}

/* Reads and checks up to the budget. Returns 0, or 1 after failing c. */
static int peer_rx(struct peer *p, struct peer_conn *c)
{
	size_t budget = DND_PEER_BUDGET;
	uint64_t bad;
	ssize_t n;

	while (budget && !c->rx_eof) {
		bool hdr = p->sink && !c->hdr_ok;

		/* A paused sink takes headers, then lets the data pile up. */
		if (p->sink && !hdr && p->o->pause && !p->resumed) {
			if (!c->halted)
				p->halted++;
			c->halted = true;
			return 0;
		}
		/* Unverified, TCP's MSG_TRUNC drops the data unread. */
		n = hdr ? recv(c->fd, c->hdr + c->hdr_n,
			       DND_PEER_HDR - c->hdr_n, MSG_DONTWAIT) :
			  recv(c->fd, p->rbuf, DND_PEER_CHUNK, MSG_DONTWAIT |
			       (p->o->no_verify ? MSG_TRUNC : 0));
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n == -1) {
			peer_fail(p, c, "%s after %llu of %llu bytes",
				  strerror(errno), (unsigned long long)c->rx_n,
				  (unsigned long long)c->rx_len);
			return 1;
		}
		p->progress = p->el.now;
		if (n == 0 && hdr) {
			peer_fail(p, c, "the connection closed before the "
				  "header (%zu of %d bytes)", c->hdr_n,
				  DND_PEER_HDR);
			return 1;
		}
		if (n == 0) {
			c->rx_eof = true;
			if (c->rx_n == c->rx_len)
				return 0;
			peer_fail(p, c, "the connection closed after %llu of "
				  "%llu bytes", (unsigned long long)c->rx_n,
				  (unsigned long long)c->rx_len);
			return 1;
		}
		if (hdr) {
			c->hdr_n += (size_t)n;
			if (c->hdr_n == DND_PEER_HDR && peer_parse_hdr(c)) {
				peer_fail(p, c, "bad header: not a dnd bench "
					  "relay client");
				return 1;
			}
			continue;
		}
		if (c->rx_n + (uint64_t)n > c->rx_len) {
			peer_fail(p, c, "got more than the %llu bytes "
				  "announced", (unsigned long long)c->rx_len);
			return 1;
		}
		bad = p->o->no_verify ? 0 : peer_check(p, c, (size_t)n);
		if (bad) {
			peer_fail(p, c, "byte %llu differs from the pattern",
				  (unsigned long long)(bad - 1));
			return 1;
		}
		c->rx_n += (uint64_t)n;
		p->res->received += (uint64_t)n;
		budget -= (size_t)n < budget ? (size_t)n : budget;
	}
	return 0;
}

static void peer_on_event(struct evloop *el, int fd, void *data,
			  unsigned int fired);

/* Interest follows what is left to do; ends the flow when all is done. */
void peer_watch(struct peer *p, struct peer_conn *c)
{
	unsigned int m = 0;
	int e;

	if (c->tx_shut && c->rx_eof) {
		peer_end(p, c, true);
		return;
	}
	if (c->connecting)
		m = DND_EV_WRITE;
	else {
		if (!c->rx_eof && !(p->sink && c->halted))
			m |= DND_EV_READ;
		if (peer_may_send(c) && !(!p->sink && c->halted))
			m |= DND_EV_WRITE;
	}
	/* Nothing to do (halted, all read): still hear of a reset. */
	if (!m)
		m = DND_EV_ERR;
	e = evloop_set(&p->el, c->fd, m, peer_on_event, peer_on_event, c);
	if (e)
		peer_fail(p, c, "epoll: %s", strerror(-e));
}

static void peer_on_event(struct evloop *el, int fd, void *data,
			  unsigned int fired)
{
	struct peer_conn *c = data;
	struct peer *p = c->p;
	int e = 0;
	socklen_t len = sizeof(e);

	/* Errors only (see peer_watch): the connection broke while waiting. */
	if ((fired & DND_EV_ERR) && evloop_mask(el, fd) == DND_EV_ERR) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
			e = errno;
		peer_fail(p, c, "%s while waiting, after %llu of %llu bytes "
			  "sent", e ? strerror(e) : "hangup",
			  (unsigned long long)c->tx_n,
			  (unsigned long long)c->tx_len);
		return;
	}
	if (c->connecting) {
		e = net_connect_done(fd);
		if (e == -EINPROGRESS)
			return;
		if (e) {
			peer_fail(p, c, "connect: %s", strerror(-e));
			return;
		}
		c->connecting = false;
		p->progress = el->now;
	}
	if ((fired & DND_EV_READ) && peer_rx(p, c))
		return;
	e = peer_tx(p, c);
	if (e) {
		peer_fail(p, c, "send: %s after %llu of %llu bytes",
			  strerror(-e), (unsigned long long)c->tx_n,
			  (unsigned long long)c->tx_len);
		return;
	}
	peer_watch(p, c);
}

void peer_resume(struct peer *p)
{
	unsigned int i;

	p->resumed = true;
	for (i = p->nlive; i-- > 0;) {
		struct peer_conn *c = p->live[i];

		if (c->halted) {
			c->halted = false;
			peer_watch(p, c);
		}
	}
}
