// SPDX-License-Identifier: MIT
/*
 * Seed 004's relay: many TCP flows through one level-triggered epoll loop
 * (evloop.c). This file runs the loop: setup, signals, timers and the end;
 * flows begin in relay_accept.c, live in relay_flow.c, move in relay_pump.c.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "core/pipe.h"
#include "core/stats.h"
#include "relay/evloop.h"
#include "relay/relay.h"
#include "relay/relay_accept.h"
#include "relay/relay_flow.h"
#include "relay/relay_pump.h"
#include "relay/relay_stats.h"

#define DND_RELAY_FD_SLACK 64	/* listener, epoll, signalfd, stdio, logs */
#define DND_RELAY_LINGER 2.0	/* seconds a failing flow's last bytes may sit
				 * unacknowledged before the reset */
#define DND_RELAY_FLUSH_TICK 0.01	/* seconds between send queue checks */
/*
 * 1 MiB pipes: a splice moves up to 16 times more than through the 64 KiB
 * default, so there are that many fewer calls and wakeups (on loopback the
 * relay's CPU per GiB about halves). Idle flows hold no pipe, so the memory
 * is only what is in flight.
 */
#define DND_RELAY_PIPE_SIZE (1u << 20)

static void relay_begin_drain(struct relay *r)
{
	if (r->draining)
		return;
	r->draining = true;
	r->grace_end = r->el.now + r->o->grace;
	evloop_del(&r->el, r->lfd);
	close(r->lfd);
	r->lfd = -1;
	r->paused = true;
}

/* Copies the loop's and the pool's counters and the CPU so far into st. */
static void relay_snapshot(struct relay *r)
{
	struct relay_stats *st = r->st;
	struct dnd_sample t1;
	struct dnd_cost c;

	st->wakeups = r->el.wakeups;
	st->events = r->el.events;
	st->epoll_ctl = r->el.ctl_calls;
	st->pipes_created = r->pool.created;
	st->pipes_peak = r->pool.peak;
	st->pipe_size_min = r->pool.min_size;
	st->pipes_small = r->pool.shrunk;
	st->pipes_failed = r->pool.failed;
	st->pipes_max = r->pool.max;
	st->pipes_alive = r->pool.used + r->pool.nfree;
	stats_sample(&t1);
	stats_cost(&r->t0, &t1, 0, &c);
	st->seconds = c.wall;
	st->cpu_user = c.user;
	st->cpu_sys = c.sys;
}

static void relay_on_signal(struct evloop *el, int fd, void *data,
			    unsigned int fired)
{
	struct relay *r = data;
	int sig;

	while ((sig = evloop_signal_next(fd))) {
		if (sig == SIGUSR1) {
			relay_snapshot(r);
			relay_stats_print(r->o, r->st, r->o->out);
		} else {
			relay_begin_drain(r);
		}
	}
}

/*
 * Failing flows wait for their healthy side's send queue to empty, or to
 * stop shrinking for DND_RELAY_LINGER, then are reset. No event says "send
 * queue empty", hence the polling (only while such flows exist).
 */
static void relay_flush_check(struct relay *r)
{
	struct relay_flow *f, *next;
	int q;

	for (f = r->flushing.head; f; f = next) {
		next = f->next;
		q = net_outq(f->fd[f->err[0] ? 1 : 0]);
		if (q < 0)
			q = 0;
		if (q && q != f->outq) {
			f->outq = q;
			f->last = r->el.now;
			/* Keep the list ordered by last. */
			relay_list_del(f);
			relay_list_add(&r->flushing, f);
		} else if (!q || r->el.now - f->last >= DND_RELAY_LINGER ||
			   (r->draining && r->el.now >= r->grace_end)) {
			relay_flow_close(r, f, DND_RELAY_RESET);
		}
	}
}

/* Connect and idle timeouts, the listener's rest, the grace period. */
static void relay_timers(struct relay *r)
{
	double now = r->el.now;
	struct relay_flow *f;

	while ((f = r->connecting.head) &&
	       now - f->last >= r->o->connect_timeout)
		relay_flow_fail(r, f, -ETIMEDOUT);
	while (r->o->idle_timeout > 0 && (f = r->open.head) &&
	       now - f->last >= r->o->idle_timeout)
		relay_flow_close(r, f, DND_RELAY_IDLE);
	relay_flush_check(r);
	while ((f = r->waiting.head) && now - f->last >= r->o->connect_timeout)
		relay_flow_fail(r, f, -EMFILE);
	if (r->waiting.head && now >= r->retry_at)
		relay_retry_waiting(r);
	if (r->paused && r->resume_at > 0 && now >= r->resume_at) {
		r->resume_at = 0;
		relay_listen_on(r);
	}
	if (r->draining && now >= r->grace_end) {
		while ((f = r->waiting.head))
			relay_flow_fail(r, f, -ESHUTDOWN);
		while ((f = r->connecting.head))
			relay_flow_fail(r, f, -ESHUTDOWN);
		while ((f = r->open.head))
			relay_flow_close(r, f, DND_RELAY_GRACE);
		while ((f = r->flushing.head))
			relay_flow_close(r, f, DND_RELAY_RESET);
	}
	if (r->draining && !r->nflows)
		r->stop = true;
}

/* Milliseconds until the next timer, or -1. */
static int relay_next_ms(const struct relay *r)
{
	double next = 0, now = r->el.now, t;

#define DND_RELAY_SOONER(x) \
	do { t = (x); if (next == 0 || t < next) next = t; } while (0)
	if (r->connecting.head)
		DND_RELAY_SOONER(r->connecting.head->last +
				 r->o->connect_timeout);
	if (r->o->idle_timeout > 0 && r->open.head)
		DND_RELAY_SOONER(r->open.head->last + r->o->idle_timeout);
	if (r->flushing.head)
		DND_RELAY_SOONER(now + DND_RELAY_FLUSH_TICK);
	if (r->waiting.head)
		DND_RELAY_SOONER(r->retry_at);
	if (r->paused && r->resume_at > 0)
		DND_RELAY_SOONER(r->resume_at);
	if (r->draining)
		DND_RELAY_SOONER(r->grace_end);
#undef DND_RELAY_SOONER
	if (next == 0)
		return -1;
	return next <= now ? 0 : (int)((next - now) * 1000.0) + 1;
}

/*
 * Each flow needs two sockets, and each pipe two fds. The soft limit goes
 * as high as the flows and pipes need, or as the hard limit allows: a
 * shortfall for the flows asked is an error that says how many the hard
 * limit allows; one for pipes only lowers *pipes (flows past it copy), and
 * says so. Returns the soft limit now in force, or -errno.
 */
static int relay_nofile(const struct relay_opts *o, unsigned int *pipes)
{
	uint64_t flows = 2ULL * o->max_conn + DND_RELAY_FD_SLACK, want;
	struct rlimit rl;
	rlim_t was;

	want = flows + 2ULL * o->max_pipes;
	if (want > 1 << 20)
		want = 1 << 20;
	*pipes = o->max_pipes;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -errno;
	was = rl.rlim_cur;
	if (rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max != RLIM_INFINITY &&
			      rl.rlim_max < want ? rl.rlim_max : want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			rl.rlim_cur = was;
	}
	if (rl.rlim_cur < flows) {
		log_err("relay: --max-conn %u needs %llu file descriptors (2 a "
			"flow, %d more for the loop), but RLIMIT_NOFILE allows "
			"%llu (ulimit -Hn), enough for %llu flows; lower "
			"--max-conn or raise the hard limit", o->max_conn,
			(unsigned long long)flows, DND_RELAY_FD_SLACK,
			(unsigned long long)rl.rlim_max,
			rl.rlim_cur > DND_RELAY_FD_SLACK ? (unsigned long long)
			(rl.rlim_cur - DND_RELAY_FD_SLACK) / 2 : 0ULL);
		return -EMFILE;
	}
	if (rl.rlim_cur < want)
		*pipes = (unsigned int)((rl.rlim_cur - flows) / 2);
	if (o->quiet)
		return (int)(rl.rlim_cur < want ? rl.rlim_cur : want);
	if (rl.rlim_cur != was)
		log_err("relay: RLIMIT_NOFILE soft limit raised from %llu to "
			"%llu (hard limit %llu)", (unsigned long long)was,
			(unsigned long long)rl.rlim_cur,
			(unsigned long long)rl.rlim_max);
	if (*pipes < o->max_pipes)
		log_warn("relay: RLIMIT_NOFILE %llu leaves fds for %u pipes, "
			 "not the %u asked (--max-pipes); flows past them copy "
			 "(raise ulimit -Hn for more)",
			 (unsigned long long)rl.rlim_cur, *pipes, o->max_pipes);
	return (int)(rl.rlim_cur < want ? rl.rlim_cur : want);
}

/* The pipe size to ask for: the default is capped by fs.pipe-max-size. */
static unsigned int relay_pipe_size(const struct relay_opts *o)
{
	unsigned int max = pipe_max_size();

	if (o->pipe_size != DND_RELAY_PIPE_DEFAULT)
		return o->pipe_size;
	return max && max < DND_RELAY_PIPE_SIZE ? max : DND_RELAY_PIPE_SIZE;
}

static int relay_setup(struct relay *r)
{
	const struct relay_opts *o = r->o;
	char err[256];
	unsigned int pipes;
	int e, setsize;

	setsize = relay_nofile(o, &pipes);
	if (setsize < 0)
		return setsize;
	e = net_addr(o->target_host, o->target_port, &r->target,
		     &r->target_len, err, sizeof(err));
	if (e) {
		log_err("relay: -t: %s", err);
		return e;
	}
	net_addr_str((struct sockaddr *)&r->target, r->target_len,
		     r->target_name, sizeof(r->target_name));
	e = evloop_init(&r->el, setsize, (int)o->maxevents);
	if (!e)
		e = pipe_pool_init(&r->pool, pipes, relay_pipe_size(o));
	if (e) {
		log_err("relay: cannot set up the event loop: %s",
			strerror(-e));
		return e;
	}
	r->lfd = o->listen_fd;
	if (r->lfd < 0) {
		r->lfd = net_listen_nb(o->listen_host, o->listen_port,
				       SOMAXCONN, err, sizeof(err));
		if (r->lfd == -EADDRINUSE)
			log_err("relay: port %u is in use by another process; "
				"choose another with -l", o->listen_port);
		else if (r->lfd < 0)
			log_err("relay: %s", err);
		if (r->lfd < 0)
			return r->lfd;
	}
	r->budget = o->budget ? o->budget :
		    4 * (size_t)(r->pool.want ? r->pool.want : 65536);
	if (r->budget < 256 * 1024)
		r->budget = 256 * 1024;
	return evloop_set(&r->el, r->lfd, DND_EV_READ, relay_on_accept,
			  relay_on_accept, r);
}

static void relay_finish(struct relay *r)
{
	struct relay_flow *f;

	r->draining = true;
	while ((f = r->waiting.head))
		relay_flow_fail(r, f, -ESHUTDOWN);
	while ((f = r->connecting.head))
		relay_flow_fail(r, f, -ESHUTDOWN);
	while ((f = r->open.head))
		relay_flow_close(r, f, DND_RELAY_GRACE);
	while ((f = r->flushing.head))
		relay_flow_close(r, f, DND_RELAY_RESET);
	relay_snapshot(r);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->sfd >= 0)
		close(r->sfd);
	pipe_pool_free(&r->pool);
	relay_bufs_free(r);
	evloop_free(&r->el);
}

int relay_run(const struct relay_opts *o, struct relay_stats *st)
{
	struct relay r;
	sigset_t old;
	int e, n;

	memset(&r, 0, sizeof(r));
	memset(st, 0, sizeof(*st));
	r.o = o;
	r.st = st;
	r.lfd = r.sfd = -1;
	r.el.epfd = -1;
	sigprocmask(SIG_BLOCK, NULL, &old);
	stats_sample(&r.t0);
	e = relay_setup(&r);
	if (!e) {
		r.sfd = evloop_signalfd(&r.el, &old, relay_on_signal, &r);
		e = r.sfd < 0 ? r.sfd : 0;
	}
	while (!e && !r.stop) {
		n = evloop_poll(&r.el, relay_next_ms(&r));
		if (n < 0) {
			log_err("relay: epoll_wait: %s", strerror(-n));
			e = n;
		}
		relay_timers(&r);
	}
	relay_finish(&r);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return e;
}

void relay_defaults(struct relay_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->listen_fd = -1;
	o->mode = DND_RELAY_SPLICE;
	o->pipe_size = DND_RELAY_PIPE_DEFAULT;
	o->max_conn = 1024;
	o->max_pipes = 2048;
	o->maxevents = 256;
	o->buf_size = 64 * 1024;
	o->connect_timeout = 5;
	o->grace = 10;
	o->out = stdout;
}
