// SPDX-License-Identifier: MIT
/*
 * Load generator for the relay. Every flow starts with a 32-byte header (id,
 * lengths, flags) and then carries a pattern that depends on its id and
 * direction, so the far end checks each byte with a memcmp and no hashing.
 */
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay/evloop.h"
#include "core/log.h"
#include "core/net.h"
#include "relay/relay_peer.h"
#include "core/stats.h"

#define DND_PEER_MAGIC "dndrly01"
#define DND_PEER_HDR 32
/* A prime period: a stream that slipped by any chunk size cannot match. */
#define DND_PEER_PERIOD 65521u
#define DND_PEER_CHUNK (256u * 1024)
#define DND_PEER_BUDGET (1u << 20)	/* bytes per flow per wakeup */
#define DND_PEER_F_AFTER_EOF 0x1u

struct peer;

struct peer_conn {
	struct peer *p;
	int fd;
	unsigned int slot;	/* index in p->live */
	uint32_t id, flags;
	unsigned char hdr[DND_PEER_HDR];
	size_t hdr_n;		/* header bytes sent (client) or received (sink) */
	uint64_t tx_len, tx_n;	/* payload to send, sent */
	uint64_t rx_len, rx_n;	/* payload expected, received */
	uint32_t tx_phase, rx_phase;
	bool connecting, hdr_ok, tx_shut, rx_eof, halted;
};

struct peer {
	const struct peer_opts *o;
	struct peer_result *res;
	bool sink;
	struct evloop el;
	unsigned char *pat;	/* DND_PEER_PERIOD + DND_PEER_CHUNK bytes */
	unsigned char *rbuf;
	int sfd;
	struct peer_conn **live;
	unsigned int nlive, cap;
	unsigned int halted;	/* flows waiting for SIGUSR1 (--pause) */
	bool resumed;
	bool stop;
	double t0, t_last;	/* first connect/accept, last flow done */
	double progress;	/* last time anything moved */
};

static uint32_t peer_phase(uint32_t id, int dir)
{
	return (uint32_t)(((uint64_t)id * 2 + (uint64_t)dir) * 7919u %
			  DND_PEER_PERIOD);
}

static int peer_live_add(struct peer *p, struct peer_conn *c)
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

static void peer_fail(struct peer *p, struct peer_conn *c, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

static void peer_fail(struct peer *p, struct peer_conn *c, const char *fmt,
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

			if (p->o->pause && !p->sink && !p->resumed &&
			    c->tx_n >= c->tx_len / 2) {
				if (!c->halted)
					p->halted++;
				c->halted = true;
				return 0;
			}
			n = send(c->fd, p->pat + off, len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0) {
				c->tx_n += (uint64_t)n;
				p->res->sent += (uint64_t)n;
				budget -= (size_t)n < budget ? (size_t)n : budget;
			}
		} else {
			if (shutdown(c->fd, SHUT_WR) == -1)
				return -errno;
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
static void peer_watch(struct peer *p, struct peer_conn *c)
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
	e = evloop_set(&p->el, c->fd, m, peer_on_event, peer_on_event, c);
	if (e)
		peer_fail(p, c, "epoll: %s", strerror(-e));
}

static void peer_on_event(struct evloop *el, int fd, void *data,
			  unsigned int fired)
{
	struct peer_conn *c = data;
	struct peer *p = c->p;
	int e;

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

static void peer_resume(struct peer *p)
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

static void peer_on_signal(struct evloop *el, int fd, void *data,
			   unsigned int fired)
{
	struct peer *p = data;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			peer_resume(p);
		} else {
			p->res->interrupted = true;
			p->stop = true;
		}
	}
}

static void peer_on_accept(struct evloop *el, int fd, void *data,
			   unsigned int fired)
{
	struct peer *p = data;
	struct peer_conn *c;
	int cfd, i;

	for (i = 0; i < 64; i++) {
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd == -1)
			return;
		c = calloc(1, sizeof(*c));
		if (!c || peer_live_add(p, c)) {
			free(c);
			close(cfd);
			return;
		}
		c->p = p;
		c->fd = cfd;
		if (!p->t0)
			p->t0 = el->now;
		p->progress = el->now;
		peer_watch(p, c);
	}
}

/* Opens every client flow at once; a failure to start one fails it. */
static int peer_connect_all(struct peer *p)
{
	const struct peer_opts *o = p->o;
	struct sockaddr_storage ss;
	socklen_t sl;
	char err[256];
	unsigned int i;
	int e;

	e = net_addr(o->host, o->port, &ss, &sl, err, sizeof(err));
	if (e) {
		log_err("peer: %s", err);
		return e;
	}
	p->t0 = stats_now();
	for (i = 0; i < o->flows; i++) {
		struct peer_conn *c = calloc(1, sizeof(*c));
		uint64_t tx = o->bytes / o->flows + (i < o->bytes % o->flows);
		uint64_t rx = o->reply / o->flows + (i < o->reply % o->flows);
		uint32_t w;
		uint64_t v;
		bool pending;

		if (!c || peer_live_add(p, c)) {
			free(c);
			return -ENOMEM;
		}
		c->p = p;
		c->id = i;
		c->tx_len = tx;
		c->rx_len = rx;
		c->tx_phase = peer_phase(i, 0);
		c->rx_phase = peer_phase(i, 1);
		memcpy(c->hdr, DND_PEER_MAGIC, 8);
		w = htole32(i);
		memcpy(c->hdr + 8, &w, 4);
		w = htole32(o->after_eof ? DND_PEER_F_AFTER_EOF : 0);
		memcpy(c->hdr + 12, &w, 4);
		v = htole64(tx);
		memcpy(c->hdr + 16, &v, 8);
		v = htole64(rx);
		memcpy(c->hdr + 24, &v, 8);
		c->fd = net_connect_nb((struct sockaddr *)&ss, sl, &pending);
		if (c->fd < 0) {
			e = c->fd;
			c->fd = -1;
			peer_fail(p, c, "connect: %s", strerror(-e));
			continue;
		}
		c->connecting = pending;
		peer_watch(p, c);
	}
	return 0;
}

/* Fails every open flow after a stall, so that a run always ends. */
static void peer_stalled(struct peer *p)
{
	while (p->nlive)
		peer_fail(p, p->live[p->nlive - 1], "stalled: nothing moved "
			  "for %.0f s (sent %llu of %llu, received %llu of "
			  "%llu)", p->o->stall,
			  (unsigned long long)p->live[p->nlive - 1]->tx_n,
			  (unsigned long long)p->live[p->nlive - 1]->tx_len,
			  (unsigned long long)p->live[p->nlive - 1]->rx_n,
			  (unsigned long long)p->live[p->nlive - 1]->rx_len);
	p->stop = true;
}

/* One fd per flow, plus a few; the soft limit is often just 1024. */
static int peer_nofile(unsigned int flows)
{
	rlim_t need = (rlim_t)flows + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -errno;
	if (rl.rlim_cur >= need)
		return 0;
	rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= need)
		return 0;
	log_err("peer: %u flows need %llu file descriptors, but the hard "
		"limit is %llu; raise ulimit -Hn or use fewer flows", flows,
		(unsigned long long)need, (unsigned long long)rl.rlim_max);
	return -EMFILE;
}

static int peer_setup(struct peer *p, sigset_t *old)
{
	sigset_t set;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;
	int e;

	p->sfd = -1;
	e = peer_nofile(p->sink ? p->o->count : p->o->flows);
	if (e)
		return e;
	p->pat = malloc(DND_PEER_PERIOD + DND_PEER_CHUNK);
	p->rbuf = malloc(DND_PEER_CHUNK);
	if (!p->pat || !p->rbuf)
		return -ENOMEM;
	/* xorshift64: cheap, and no byte value or run dominates. */
	for (i = 0; i < DND_PEER_PERIOD; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p->pat[i] = (unsigned char)(x >> 24);
	}
	for (; i < DND_PEER_PERIOD + DND_PEER_CHUNK; i++)
		p->pat[i] = p->pat[i - DND_PEER_PERIOD];
	e = evloop_init(&p->el, 1 << 16, 256);
	if (e)
		return e;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, old) == -1)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	p->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (p->sfd == -1)
		return -errno;
	return evloop_set(&p->el, p->sfd, DND_EV_READ, peer_on_signal,
			  peer_on_signal, p);
}

static void peer_loop(struct peer *p)
{
	const struct peer_opts *o = p->o;
	bool told = false;
	double stall = o->stall > 0 ? o->stall : 30;
	unsigned int want = p->sink ? o->count : o->flows;

	p->progress = stats_now();
	while (!p->stop) {
		if (evloop_poll(&p->el, 250) < 0)
			break;
		if (o->pause && !told && !p->resumed && want &&
		    p->halted == want) {
			printf("peer %s: paused; send SIGUSR1 to go on\n",
			       p->sink ? "sink" : "client");
			fflush(stdout);
			told = true;
		}
		/* A paused client waits for its signal, not for progress. */
		if (!p->stop && !(o->pause && !p->resumed) &&
		    p->el.now - p->progress > stall)
			peer_stalled(p);
	}
}

static int peer_run(struct peer *p, const struct peer_opts *o,
		    struct peer_result *res, bool sink)
{
	struct dnd_sample s0, s1;
	struct dnd_cost cost;
	sigset_t old;
	int e;

	memset(p, 0, sizeof(*p));
	memset(res, 0, sizeof(*res));
	p->o = o;
	p->res = res;
	p->sink = sink;
	p->el.epfd = -1;
	sigprocmask(SIG_BLOCK, NULL, &old);
	stats_sample(&s0);
	e = peer_setup(p, &old);
	if (!e && sink)
		e = evloop_set(&p->el, o->listen_fd, DND_EV_READ,
			       peer_on_accept, peer_on_accept, p);
	if (!e && !sink)
		e = peer_connect_all(p);
	if (!e)
		peer_loop(p);
	else
		log_err("peer: cannot start: %s", strerror(-e));
	while (p->nlive)
		peer_fail(p, p->live[p->nlive - 1], "stopped before the end");
	stats_sample(&s1);
	stats_cost(&s0, &s1, 0, &cost);
	res->cpu_user = cost.user;
	res->cpu_sys = cost.sys;
	res->seconds = p->t_last > p->t0 ? p->t_last - p->t0 : 0;
	res->t_start = p->t0;
	res->t_end = p->t_last;
	if (p->sfd != -1)
		close(p->sfd);
	evloop_free(&p->el);
	free(p->live);
	free(p->pat);
	free(p->rbuf);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e)
		return e;
	return res->failed ? -EIO : 0;
}

static void peer_summary(const struct peer_opts *o,
			 const struct peer_result *res, const char *who)
{
	if (res->error[0])
		log_err("%s%s", res->error, res->failed > 1 ?
			" (and more flows failed)" : "");
	if (o->quiet)
		return;
	printf("peer %s: %u flows ok, %u failed; sent %llu B, received %llu "
	       "B, %.3f s\n", who, res->ok, res->failed,
	       (unsigned long long)res->sent,
	       (unsigned long long)res->received, res->seconds);
	fflush(stdout);
}

int peer_client_run(const struct peer_opts *o, struct peer_result *res)
{
	struct peer p;
	int e = peer_run(&p, o, res, false);

	peer_summary(o, res, "client");
	return e;
}

int peer_server_run(const struct peer_opts *o, struct peer_result *res)
{
	struct peer p;
	int e = peer_run(&p, o, res, true);

	peer_summary(o, res, "sink");
	return e;
}
