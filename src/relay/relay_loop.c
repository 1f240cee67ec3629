// SPDX-License-Identifier: MIT
/*
 * One relay loop: its epoll (evloop.c), timers, drain and end. With
 * --threads each loop is a thread with its own flows, pipes and counters;
 * they share only the listener and a few atomics (relay_types.h).
 */
#include <sys/eventfd.h>
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
#include "relay/relay_loop.h"
#include "relay/relay_pump.h"
#include "relay/relay_sockmap.h"
#include "relay/relay_stats.h"

#define DND_RELAY_LINGER 2.0	/* seconds a failing flow's last bytes may sit
				 * unacknowledged before the reset */
#define DND_RELAY_FLUSH_TICK 0.01	/* seconds between send queue checks */
#define DND_RELAY_LIVE_TICK 1.0	/* -m sockmap --metrics: seconds between
				 * reads of the open flows' counts */

void relay_begin_drain(struct relay *r)
{
	if (r->draining)
		return;
	r->draining = true;
	r->grace_end = r->el.now + r->o->grace;
	/* relay_run() closes the listener once every loop is done with it. */
	if (r->lfd >= 0)
		evloop_del(&r->el, r->lfd);
	r->lfd = -1;
	r->paused = true;
}

void relay_wake(struct relay *r)
{
	uint64_t one = 1;

	/* A full counter (EAGAIN) still wakes the loop. */
	if (r->evfd >= 0 && write(r->evfd, &one, sizeof(one)) < 0)
		return;
}

void relay_drain_all(struct relay_shared *sh)
{
	unsigned int i;

	if (atomic_exchange(&sh->drain, true))
		return;
	/* A listening socket shut down for reading stops listening at once
	 * [inet_shutdown()]; every loop's accept then fails with EINVAL. */
	shutdown(sh->lfd, SHUT_RD);
	for (i = 0; i < sh->n; i++)
		relay_wake(&sh->loops[i]);
}

/* The loop's and the pool's counters into r->st. */
static void relay_counters(struct relay *r)
{
	struct relay_stats *st = r->st;

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
}

void relay_publish(struct relay *r)
{
	relay_counters(r);
	pthread_mutex_lock(&r->pub_lock);
	r->pub = *r->st;
	r->pub.bytes[0] += r->live[0];
	r->pub.bytes[1] += r->live[1];
	pthread_mutex_unlock(&r->pub_lock);
}

void relay_loops_sum(struct relay_shared *sh, struct relay_stats *st)
{
	struct dnd_sample t1;
	struct dnd_cost c;
	unsigned int i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < sh->n; i++) {
		struct relay *r = &sh->loops[i];

		pthread_mutex_lock(&r->pub_lock);
		relay_stats_add(st, &r->pub);
		if (i < DND_RELAY_MAX_THREADS)
			st->accepted_by[i] = r->pub.accepted;
		pthread_mutex_unlock(&r->pub_lock);
	}
	st->mode = (int)sh->mode;
	st->threads = sh->n;
	st->active = atomic_load(&sh->active);
	st->peak_active = atomic_load(&sh->peak_active);
	stats_sample(&t1);
	stats_cost(&sh->t0, &t1, 0, &c);
	st->seconds = c.wall;
	st->cpu_user = c.user;
	st->cpu_sys = c.sys;
}

static void relay_on_signal(struct evloop *el, int fd, void *data,
			    unsigned int fired)
{
	struct relay *r = data;
	struct relay_stats st;
	int sig;

	while ((sig = evloop_signal_next(fd))) {
		if (sig == SIGUSR1) {
			relay_publish(r);
			relay_loops_sum(r->sh, &st);
			relay_stats_print(r->o, &st, r->o->out);
		} else {
			relay_drain_all(r->sh);
			relay_begin_drain(r);
		}
	}
}

/* Another loop hands this one clients, asks it to drain, or has ended. */
static void relay_on_wake(struct evloop *el, int fd, void *data,
			  unsigned int fired)
{
	struct relay *r = data;
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (atomic_load(&r->sh->drain))
		relay_begin_drain(r);
	relay_take_handed(r);
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

/* Every flow left is reset: the grace period is over, or the loop ends. */
static void relay_reset_all(struct relay *r)
{
	struct relay_flow *f;

	while ((f = r->waiting.head))
		relay_flow_fail(r, f, -ESHUTDOWN);
	while ((f = r->connecting.head))
		relay_flow_fail(r, f, -ESHUTDOWN);
	while ((f = r->open.head))
		relay_flow_close(r, f, DND_RELAY_GRACE);
	while ((f = r->flushing.head))
		relay_flow_close(r, f, DND_RELAY_RESET);
	while ((f = r->handing.head))
		relay_flow_close(r, f, DND_RELAY_GRACE);
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
		if (!f->paired || !relay_sm_moved(r, f))
			relay_flow_close(r, f, DND_RELAY_IDLE);
	relay_flush_check(r);
	relay_sm_check(r);
	if (r->sh->bpf && r->o->metrics && now >= r->live_at) {
		relay_sm_live(r);
		r->live_at = now + DND_RELAY_LIVE_TICK;
	}
	while ((f = r->waiting.head) && now - f->last >= r->o->connect_timeout)
		relay_flow_fail(r, f, -EMFILE);
	if (r->waiting.head && now >= r->retry_at)
		relay_retry_waiting(r);
	if (r->paused && r->resume_at > 0 && now >= r->resume_at) {
		r->resume_at = 0;
		relay_listen_on(r);
	}
	if (r->draining && now >= r->grace_end)
		relay_reset_all(r);
	/* Loop 0 reads the signals, so it ends after the others. */
	if (r->draining && !r->nflows &&
	    (r->id || atomic_load(&r->sh->running) == 1))
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
	if (r->flushing.head || r->handing.head)
		DND_RELAY_SOONER(now + DND_RELAY_FLUSH_TICK);
	if (r->sh->bpf && r->o->metrics && r->nflows)
		DND_RELAY_SOONER(r->live_at);
	if (r->waiting.head)
		DND_RELAY_SOONER(r->retry_at);
	if (r->paused && r->resume_at > 0)
		DND_RELAY_SOONER(r->resume_at);
	/* Past it, every flow is gone: loop 0 then sleeps until the others
	 * end, instead of spinning on a deadline in the past. */
	if (r->draining && r->nflows)
		DND_RELAY_SOONER(r->grace_end);
#undef DND_RELAY_SOONER
	if (next == 0)
		return -1;
	return next <= now ? 0 : (int)((next - now) * 1000.0) + 1;
}

/* Loop id's share of total: as even as it goes, the first ones get more. */
static unsigned int relay_share(unsigned int total, unsigned int n,
				unsigned int id)
{
	return total / n + (id < total % n);
}

int relay_loop_init(struct relay_shared *sh, unsigned int id)
{
	struct relay *r = &sh->loops[id];
	const struct relay_opts *o = sh->o;
	int e;

	r->o = o;
	r->sh = sh;
	r->id = id;
	r->st = &r->own;
	r->lfd = sh->lfd;
	r->sfd = r->evfd = -1;
	r->el.epfd = -1;
	r->max_conn = relay_share(o->max_conn, sh->n, id);
	r->lmask = sh->n > 1 ? DND_EV_READ | DND_EV_EXCL : DND_EV_READ;
	pthread_mutex_init(&r->pub_lock, NULL);
	e = evloop_init(&r->el, sh->setsize, (int)o->maxevents);
	if (!e)
		e = pipe_pool_init(&r->pool, relay_share(sh->max_pipes, sh->n,
							 id), sh->pipe_size);
	if (!e)
		e = relay_sm_loop_init(r);
	if (!e && sh->n > 1) {
		r->inbox = calloc(sh->n, sizeof(*r->inbox));
		if (!r->inbox)
			e = -ENOMEM;
	}
	if (!e && sh->n > 1) {
		r->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		e = r->evfd == -1 ? -errno :
		    evloop_set(&r->el, r->evfd, DND_EV_READ, relay_on_wake,
			       relay_on_wake, r);
	}
	/* A loop sharing the listener wakes alone (EPOLLEXCLUSIVE), not
	 * every loop for each connection. */
	if (!e)
		e = evloop_set(&r->el, r->lfd, r->lmask, relay_on_accept,
			       relay_on_accept, r);
	if (e)
		log_err("relay: cannot set up event loop %u: %s", id,
			strerror(-e));
	r->budget = o->budget ? o->budget :
		    4 * (size_t)(r->pool.want ? r->pool.want : 65536);
	if (r->budget < 256 * 1024)
		r->budget = 256 * 1024;
	return e;
}

int relay_loop_signals(struct relay *r, sigset_t *old)
{
	r->sfd = evloop_signalfd(&r->el, old, relay_on_signal, r);
	return r->sfd < 0 ? r->sfd : 0;
}

int relay_loop_run(struct relay *r)
{
	int e = 0, n;

	while (!e && !r->stop) {
		n = evloop_poll(&r->el, relay_next_ms(r));
		if (n < 0) {
			log_err("relay: epoll_wait: %s", strerror(-n));
			e = n;
			relay_drain_all(r->sh);
		}
		relay_timers(r);
		if (r->sh->n > 1 || r->o->metrics)
			relay_publish(r);
	}
	r->draining = true;
	relay_take_handed(r);	/* resets what came too late */
	relay_reset_all(r);
	relay_publish(r);
	atomic_fetch_sub(&r->sh->running, 1);
	if (r->id)
		relay_wake(&r->sh->loops[0]);
	return e;
}

void relay_loop_free(struct relay *r)
{
	if (r->sfd >= 0)
		close(r->sfd);
	if (r->evfd >= 0)
		close(r->evfd);
	r->sfd = r->evfd = -1;
	free(r->inbox);
	r->inbox = NULL;
	free(r->slots);
	r->slots = NULL;
	pipe_pool_free(&r->pool);
	relay_bufs_free(r);
	evloop_free(&r->el);
}
