// SPDX-License-Identifier: MIT
/*
 * Load generator for the relay: a client that opens every flow at once, or a
 * sink that accepts them, in one epoll loop with signals, a stall bound and
 * a summary. What one flow does is in relay_peer_flow.c.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "core/stats.h"
#include "relay/evloop.h"
#include "relay/relay_peer.h"
#include "relay/relay_peer_flow.h"

static void peer_on_signal(struct evloop *el, int fd, void *data,
			   unsigned int fired)
{
	struct peer *p = data;
	int sig;

	while ((sig = evloop_signal_next(fd))) {
		if (sig == SIGUSR1) {
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
		bool pending;

		if (!c || peer_live_add(p, c)) {
			free(c);
			return -ENOMEM;
		}
		peer_conn_client(p, c, i, tx, rx);
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
	p->sfd = evloop_signalfd(&p->el, old, peer_on_signal, p);
	return p->sfd < 0 ? p->sfd : 0;
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
	bool few;
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
	/* A sink that saw fewer flows than it was told to expect failed. */
	few = !e && sink && o->count && !res->interrupted &&
	      res->ok + res->failed < o->count;
	if (few && !res->error[0])
		snprintf(res->error, sizeof(res->error), "sink: only %u of %u "
			 "flows came", res->ok + res->failed, o->count);
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
	return res->failed || few ? -EIO : 0;
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
