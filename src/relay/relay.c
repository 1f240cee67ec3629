// SPDX-License-Identifier: MIT
/*
 * Seed 004's relay: many TCP flows through one level-triggered epoll loop,
 * each direction spliced socket -> pipe -> socket (relay_pump.c) [hap].
 */
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay/evloop.h"
#include "core/log.h"
#include "core/net.h"
#include "core/pipe.h"
#include "relay/relay.h"
#include "relay/relay_int.h"
#include "core/stats.h"

#define DND_RELAY_ACCEPT_BATCH 64
#define DND_RELAY_FD_SLACK 64	/* listener, epoll, signalfd, stdio, logs */
#define DND_RELAY_EMFILE_PAUSE 0.1	/* seconds the listener rests */
#define DND_RELAY_LINGER 2.0	/* seconds a refused client may take to close;
				 * also how long a failing flow's last bytes
				 * may sit unacknowledged before the reset */
#define DND_RELAY_FLUSH_TICK 0.01	/* seconds between send queue checks */
/*
 * 1 MiB pipes: a splice moves up to 16 times more than through the 64 KiB
 * default, so there are that many fewer calls and wakeups (on loopback the
 * relay's CPU per GiB about halves). Idle flows hold no pipe, so the memory
 * is only what is in flight.
 */
#define DND_RELAY_PIPE_SIZE (1u << 20)

enum relay_close {
	DND_RELAY_FIN = 0,	/* both directions ended cleanly */
	DND_RELAY_RESET,	/* a side broke; the other gets a reset too */
	DND_RELAY_IDLE,
	DND_RELAY_GRACE,
};

static void relay_listen_on(struct relay *r)
{
	if (!r->paused || r->draining || r->nflows >= r->o->max_conn ||
	    r->waiting.head)
		return;
	if (!evloop_set(&r->el, r->lfd, DND_EV_READ, NULL, NULL, NULL))
		r->paused = false;
}

static void relay_listen_off(struct relay *r, double resume_at)
{
	if (!r->paused) {
		evloop_set(&r->el, r->lfd, 0, NULL, NULL, NULL);
		r->paused = true;
		r->st->listener_pauses++;
	}
	r->resume_at = resume_at;
}

/* Gives a direction's pipe back, or kills it when bytes are stuck inside. */
static void relay_dir_free(struct relay *r, struct relay_dir *d)
{
	if (d->pipe)
		pipe_put(&r->pool, d->pipe, d->count);
	d->pipe = NULL;
	free(d->buf);
	d->buf = NULL;
}

static void relay_close_fd(struct relay *r, int fd, bool reset)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (fd == -1)
		return;
	evloop_del(&r->el, fd);
	/* A reset, not a FIN, so that a cut flow never looks complete. */
	if (reset)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/*
 * A reset throws away what sits in the pipes and the send queues: take it
 * back out of bytes[] (it was counted when handed to the kernel).
 */
static void relay_count_discard(struct relay *r, struct relay_flow *f)
{
	uint64_t q;
	int i, n;

	for (i = 0; i < 2; i++) {
		n = net_outq(f->fd[!i]);
		q = n > 0 ? (uint64_t)n : 0;
		if (q > f->sent[i])
			q = f->sent[i];
		r->st->bytes[i] -= q;
		r->st->bytes_discarded += q + f->dir[i].count;
	}
}

static void relay_flow_close(struct relay *r, struct relay_flow *f,
			     enum relay_close how)
{
	bool reset = how != DND_RELAY_FIN;

	if (reset)
		relay_count_discard(r, f);
	switch (how) {
	case DND_RELAY_FIN:
		r->st->completed++;
		break;
	case DND_RELAY_RESET:
		r->st->resets++;
		break;
	case DND_RELAY_IDLE:
		r->st->idle_closed++;
		break;
	case DND_RELAY_GRACE:
		r->st->grace_closed++;
		break;
	}
	relay_close_fd(r, f->fd[0], reset);
	relay_close_fd(r, f->fd[1], reset);
	relay_dir_free(r, &f->dir[0]);
	relay_dir_free(r, &f->dir[1]);
	relay_list_del(f);
	free(f);
	r->nflows--;
	r->st->active--;
	relay_listen_on(r);
}

/* Forgets a flow whose target side is already gone. */
static void relay_flow_drop(struct relay *r, struct relay_flow *f)
{
	relay_close_fd(r, f->fd[0], false);
	relay_list_del(f);
	free(f);
	r->nflows--;
	r->st->active--;
	relay_listen_on(r);
}

static void relay_on_linger(struct evloop *el, int fd, void *data,
			    unsigned int fired)
{
	struct relay_flow *f = data;
	char junk[16384];
	ssize_t n;
	int i;

	for (i = 0; i < 16; i++) {
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			relay_flow_drop(f->r, f);
			return;
		}
	}
}

/*
 * The target could not be reached: send the client a FIN and read what it
 * still sends until it closes too (or DND_RELAY_LINGER passes), because
 * closing with unread input, or input still on its way, makes a reset.
 */
static void relay_flow_fail(struct relay *r, struct relay_flow *f, int err)
{
	r->st->failed++;
	if (!r->told_connect) {
		log_err("relay: cannot connect to %s: %s; the client is closed "
			"(further failures are only counted)", r->target_name,
			strerror(-err));
		r->told_connect = true;
	}
	relay_close_fd(r, f->fd[1], false);
	f->fd[1] = -1;
	relay_list_del(f);
	if (!r->draining && shutdown(f->fd[0], SHUT_WR) == 0 &&
	    !evloop_set(&r->el, f->fd[0], DND_EV_READ, relay_on_linger,
			relay_on_linger, f)) {
		f->last = r->el.now;
		relay_list_add(&r->lingering, f);
		return;
	}
	relay_flow_drop(r, f);
}

static void relay_on_read(struct evloop *el, int fd, void *data,
			  unsigned int fired);
static void relay_on_write(struct evloop *el, int fd, void *data,
			   unsigned int fired);

/*
 * Epoll interest follows the pipe counts. A socket with nothing to do stays
 * registered with no events, so its error or hangup is still seen; one that
 * broke or hung up already leaves epoll (its EPOLLHUP would spin).
 */
static int relay_flow_watch(struct relay *r, struct relay_flow *f)
{
	int s, e;

	for (s = 0; s < 2; s++) {
		unsigned int m = 0;

		if (!f->dir[s].eof && !f->dir[s].full)
			m |= DND_EV_READ;
		/* Also after a spent budget: level-triggered EPOLLOUT returns. */
		if (f->dir[!s].count)
			m |= DND_EV_WRITE;
		if (!m && !f->err[s] && !f->hup[s])
			m = DND_EV_ERR;
		e = evloop_set(&r->el, f->fd[s], m, relay_on_read,
			       relay_on_write, f);
		if (e)
			return e;
	}
	return 0;
}

/*
 * A flow with a broken side ends once everything that side sent is handed
 * on: out of epoll, it waits in r->flushing until the other socket's send
 * queue is empty, then both get a reset, so the peer learns of the failure
 * only after it has the data.
 */
static void relay_flow_flush(struct relay *r, struct relay_flow *f)
{
	evloop_set(&r->el, f->fd[0], 0, NULL, NULL, NULL);
	evloop_set(&r->el, f->fd[1], 0, NULL, NULL, NULL);
	f->outq = -1;
	f->last = r->el.now;
	relay_list_del(f);
	relay_list_add(&r->flushing, f);
}

/* A broken flow is done when each broken side's input has been handed on. */
static bool relay_flow_failed_done(const struct relay_flow *f)
{
	int s;

	for (s = 0; s < 2; s++)
		if (f->err[s] && (!f->dir[s].eof || f->dir[s].count))
			return false;
	return true;
}

static void relay_flow_after(struct relay *r, struct relay_flow *f, int err)
{
	if (f->list == &r->flushing)
		return;
	if (!err && !f->err[0] && !f->err[1] && f->dir[0].shut &&
	    f->dir[1].shut) {
		relay_flow_close(r, f, DND_RELAY_FIN);
		return;
	}
	if (!err && (f->err[0] || f->err[1]) && relay_flow_failed_done(f)) {
		if (f->err[0] && f->err[1])
			relay_flow_close(r, f, DND_RELAY_RESET);
		else
			relay_flow_flush(r, f);
		return;
	}
	if (!err)
		err = relay_flow_watch(r, f);
	if (err)
		relay_flow_close(r, f, DND_RELAY_RESET);
}

/*
 * An error or hangup on a socket registered with no events: SO_ERROR tells
 * which (and clears it); either way the socket leaves epoll.
 */
static void relay_on_hangup(struct relay *r, struct relay_flow *f, int s)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(f->fd[s], SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		e = errno;
	if (e)
		relay_sock_broken(r, f, s, -e);
	else
		f->hup[s] = true;
	relay_flow_after(r, f, 0);
}

static void relay_on_read(struct evloop *el, int fd, void *data,
			  unsigned int fired)
{
	struct relay_flow *f = data;
	int s = fd == f->fd[1];

	if ((fired & DND_EV_ERR) && evloop_mask(el, fd) == DND_EV_ERR) {
		relay_on_hangup(f->r, f, s);
		return;
	}
	f->dir[s].rd_ready = true;
	if (fired & (DND_EV_RDHUP | DND_EV_ERR))
		f->dir[s].rdhup = true;
	relay_flow_after(f->r, f, relay_pump(f->r, f, s));
}

static void relay_on_write(struct evloop *el, int fd, void *data,
			   unsigned int fired)
{
	struct relay_flow *f = data;
	int s = fd == f->fd[1];

	f->dir[!s].wr_blocked = false;
	relay_flow_after(f->r, f, relay_pump(f->r, f, !s));
}

/* SO_OOBINLINE: an urgent byte stays in the stream and is forwarded. */
static void relay_tune(const struct relay *r, int fd)
{
	int one = 1, lowat = (int)r->o->rcvlowat;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one));
	if (lowat > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
}

static void relay_flow_open(struct relay *r, struct relay_flow *f)
{
	f->last = r->el.now;
	relay_list_del(f);
	relay_list_add(&r->open, f);
	relay_tune(r, f->fd[1]);
	relay_flow_after(r, f, 0);
}

static void relay_on_connect(struct evloop *el, int fd, void *data,
			     unsigned int fired)
{
	struct relay_flow *f = data;
	int e = net_connect_done(fd);

	if (e == -EINPROGRESS)
		return;
	if (e)
		relay_flow_fail(f->r, f, e);
	else
		relay_flow_open(f->r, f);
}

static bool relay_out_of_fds(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOBUFS ||
	       err == -ENOMEM;
}

/* Rests the listener when the process runs out of fds or memory. */
static void relay_fd_short(struct relay *r, int err)
{
	r->st->accept_errors++;
	if (!r->told_accept)
		log_warn("relay: %s; new connections wait (raise ulimit -n "
			 "or lower --max-conn)", strerror(-err));
	r->told_accept = true;
	r->retry_at = r->el.now + DND_RELAY_EMFILE_PAUSE;
	relay_listen_off(r, r->retry_at);
}

/*
 * Starts the connect to the target. Out of fds, the client waits in
 * r->waiting with the listener paused, rather than being turned away; then
 * returns true.
 */
static bool relay_connect(struct relay *r, struct relay_flow *f)
{
	bool pending;
	int sfd, e;

	sfd = net_connect_nb((struct sockaddr *)&r->target, r->target_len,
			     &pending);
	relay_list_del(f);
	if (relay_out_of_fds(sfd)) {
		/* f->last stays the accept time: the wait has one deadline. */
		relay_list_add(&r->waiting, f);
		relay_fd_short(r, sfd);
		return true;
	}
	/* The connect timeout runs from now, not from the accept. */
	f->last = r->el.now;
	relay_list_add(&r->connecting, f);
	if (sfd < 0) {
		relay_flow_fail(r, f, sfd);
		return false;
	}
	f->fd[1] = sfd;
	if (!pending) {
		relay_flow_open(r, f);
		return false;
	}
	e = evloop_set(&r->el, sfd, DND_EV_WRITE, relay_on_connect,
		       relay_on_connect, f);
	if (e)
		relay_flow_fail(r, f, e);
	return false;
}

static void relay_flow_start(struct relay *r, int cfd)
{
	struct relay_flow *f = calloc(1, sizeof(*f));

	if (!f) {
		relay_fd_short(r, -ENOMEM);
		close(cfd);
		return;
	}
	f->r = r;
	f->fd[0] = cfd;
	f->fd[1] = -1;
	f->last = r->el.now;
	r->nflows++;
	if (++r->st->active > r->st->peak_active)
		r->st->peak_active = r->st->active;
	relay_tune(r, cfd);
	relay_connect(r, f);
}

/* Clients that got no target socket try again, oldest first. */
static void relay_retry_waiting(struct relay *r)
{
	struct relay_flow *f;

	while ((f = r->waiting.head))
		if (relay_connect(r, f))
			break;
	relay_listen_on(r);
}

static void relay_on_accept(struct evloop *el, int fd, void *data,
			    unsigned int fired)
{
	struct relay *r = data;
	int i, cfd;

	for (i = 0; i < DND_RELAY_ACCEPT_BATCH && !r->paused; i++) {
		if (r->nflows >= r->o->max_conn) {
			relay_listen_off(r, 0);
			return;
		}
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			r->st->accepted++;
			relay_flow_start(r, cfd);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			return;
		if (relay_out_of_fds(-errno)) {
			/* The connection stays queued, and level-triggered
			 * epoll would spin on it: rest the listener. */
			relay_fd_short(r, -errno);
			return;
		}
		/* ECONNABORTED and friends concern one connection only. */
	}
}

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
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
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
	while ((f = r->lingering.head) && now - f->last >= DND_RELAY_LINGER)
		relay_flow_drop(r, f);
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
		while ((f = r->lingering.head))
			relay_flow_drop(r, f);
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
	if (r->lingering.head)
		DND_RELAY_SOONER(r->lingering.head->last + DND_RELAY_LINGER);
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
 * Each flow needs two sockets and at most two pipes of two fds each.
 * Returns the soft limit now in force, or -EMFILE after saying what to do.
 */
static int relay_nofile(const struct relay_opts *o)
{
	struct rlimit rl;
	uint64_t need = 2ULL * o->max_conn + 2ULL * o->max_pipes +
			DND_RELAY_FD_SLACK;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return -errno;
	if (rl.rlim_cur >= need)
		return rl.rlim_cur > (1 << 20) ? 1 << 20 : (int)rl.rlim_cur;
	if (need > 1 << 20 || (rl.rlim_max != RLIM_INFINITY &&
			       rl.rlim_max < need)) {
		log_err("relay: --max-conn %u and --max-pipes %u need %llu file "
			"descriptors, but RLIMIT_NOFILE allows %llu (ulimit "
			"-Hn); lower --max-conn/--max-pipes or raise the hard "
			"limit", o->max_conn, o->max_pipes,
			(unsigned long long)need,
			(unsigned long long)rl.rlim_max);
		return -EMFILE;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		log_err("relay: cannot raise RLIMIT_NOFILE to %llu: %s; raise "
			"ulimit -n or lower --max-conn", (unsigned long long)need,
			strerror(errno));
		return -errno;
	}
	return (int)need;
}

static int relay_signals(struct relay *r, sigset_t *old)
{
	sigset_t set;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, old) == -1)
		return -errno;
	r->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r->sfd == -1)
		return -errno;
	return evloop_set(&r->el, r->sfd, DND_EV_READ, relay_on_signal,
			  relay_on_signal, r);
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
	int e, setsize;

	setsize = relay_nofile(o);
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
		e = pipe_pool_init(&r->pool, o->max_pipes, relay_pipe_size(o));
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
	while ((f = r->lingering.head))
		relay_flow_drop(r, f);
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
	if (!e)
		e = relay_signals(&r, &old);
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
