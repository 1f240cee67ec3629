// SPDX-License-Identifier: MIT
/*
 * The relay of HAProxy's 2009 splice thread: many TCP flows through
 * level-triggered epoll loops (evloop.c), one by default or one a thread
 * (--threads). This file sets up what the loops share (fd limit, target,
 * listener), runs them and sums their counters; a loop is relay_loop.c, flows
 * begin in relay_accept.c, live in relay_flow.c and move in relay_pump.c.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "core/pipe.h"
#include "core/stats.h"
#include "relay/relay.h"
#include "relay/relay_accept.h"
#include "relay/relay_loop.h"
#include "relay/relay_metrics.h"
#include "relay/relay_sockmap.h"
#include "relay/relay_stats.h"
#include "relay/relay_types.h"

/* listener, epoll, signalfd, stdio, logs; another epoll and eventfd a loop */
#define DND_RELAY_FD_SLACK 64
/*
 * 1 MiB pipes: a splice moves up to 16 times more than through the 64 KiB
 * default, so there are that many fewer calls and wakeups (on loopback the
 * relay's CPU per GiB about halves). Idle flows hold no pipe, so the memory
 * is only what is in flight.
 */
#define DND_RELAY_PIPE_SIZE (1u << 20)

/*
 * Each flow needs two sockets, and each pipe two fds. The soft limit goes
 * as high as the flows and pipes need, or as the hard limit allows: a
 * shortfall for the flows asked is an error that says how many the hard
 * limit allows; one for pipes only lowers *pipes (flows past it copy), and
 * says so. Returns the soft limit now in force, or -errno.
 */
static int relay_nofile(const struct relay_opts *o, unsigned int *pipes)
{
	uint64_t slack = DND_RELAY_FD_SLACK +
			 (o->threads > 1 ? 2ULL * (o->threads - 1) : 0);
	uint64_t flows = 2ULL * o->max_conn + slack, want;
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
			"flow, %llu more for the loops), but RLIMIT_NOFILE allows "
			"%llu (ulimit -Hn), enough for %llu flows; lower "
			"--max-conn or raise the hard limit", o->max_conn,
			(unsigned long long)flows, (unsigned long long)slack,
			(unsigned long long)rl.rlim_max,
			rl.rlim_cur > slack ? (unsigned long long)
			(rl.rlim_cur - slack) / 2 : 0ULL);
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

/* One line on stderr, so a script knows the relay is up and where. */
static void relay_say_listening(const struct relay_shared *sh)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char at[96];

	if (getsockname(sh->lfd, (struct sockaddr *)&ss, &sl))
		return;
	net_addr_str((struct sockaddr *)&ss, sl, at, sizeof(at));
	log_err("listening on %s, forwarding to %s (-m %s)", at,
		sh->target_name, relay_mode_name(sh->mode));
}

/* Fd limit, target, listener: what every loop uses. Returns 0 or -errno. */
static int relay_shared_init(struct relay_shared *sh)
{
	const struct relay_opts *o = sh->o;
	char err[256];
	int e;

	sh->setsize = relay_nofile(o, &sh->max_pipes);
	if (sh->setsize < 0)
		return sh->setsize;
	sh->pipe_size = relay_pipe_size(o);
	e = relay_sm_init(sh);
	if (e)
		return e;
	e = net_addr(o->target_host, o->target_port, &sh->target,
		     &sh->target_len, err, sizeof(err));
	if (e) {
		log_err("relay: -t: %s", err);
		return e;
	}
	net_addr_str((struct sockaddr *)&sh->target, sh->target_len,
		     sh->target_name, sizeof(sh->target_name));
	sh->lfd = o->listen_fd;
	if (sh->lfd >= 0)
		return 0;
	sh->lfd = net_listen_nb(o->listen_host, o->listen_port, SOMAXCONN,
				err, sizeof(err));
	if (sh->lfd == -EADDRINUSE)
		log_err("relay: port %u is in use by another process; choose "
			"another with -l", o->listen_port);
	else if (sh->lfd < 0)
		log_err("relay: %s", err);
	else if (!o->quiet)
		relay_say_listening(sh);
	return sh->lfd < 0 ? sh->lfd : 0;
}

static void *relay_thread(void *arg)
{
	struct relay *r = arg;

	r->err = relay_loop_run(r);
	return NULL;
}

/*
 * Loops 1.. as threads; they inherit the blocked signals, so only loop 0's
 * signalfd sees them. Returns how many started; a loop that cannot start
 * makes every loop drain.
 */
static unsigned int relay_start_threads(struct relay_shared *sh)
{
	unsigned int i;
	int e;

	for (i = 1; i < sh->n; i++) {
		e = pthread_create(&sh->loops[i].thread, NULL, relay_thread,
				   &sh->loops[i]);
		if (e) {
			log_err("relay: cannot start thread %u: %s", i,
				strerror(e));
			atomic_fetch_sub(&sh->running, sh->n - i);
			relay_drain_all(sh);
			break;
		}
	}
	return i;
}

/* Sets up the loops and runs them; loop 0 in this thread. */
static int relay_run_loops(struct relay_shared *sh, unsigned int *ninit,
			   sigset_t *old)
{
	unsigned int i, started;
	int e = 0;

	for (i = 0; i < sh->n && !e; i++) {
		sh->loops[i].sfd = sh->loops[i].evfd = -1;
		sh->loops[i].el.epfd = -1;
		e = relay_loop_init(sh, i);
		*ninit = i + 1;
	}
	if (!e)
		e = relay_loop_signals(&sh->loops[0], old);
	if (!e)
		e = relay_metrics_start(sh);
	if (e)
		return e;
	atomic_store(&sh->running, sh->n);
	started = relay_start_threads(sh);
	e = relay_loop_run(&sh->loops[0]);
	for (i = 1; i < started; i++) {
		pthread_join(sh->loops[i].thread, NULL);
		if (!e)
			e = sh->loops[i].err;
	}
	/* A client handed over just as its loop ended is reset, not leaked. */
	for (i = 0; i < sh->n; i++)
		relay_take_handed(&sh->loops[i]);
	if (!e && started < sh->n)
		e = -EAGAIN;
	return e;
}

int relay_run(const struct relay_opts *o, struct relay_stats *st)
{
	struct relay_shared sh;
	unsigned int i, ninit = 0;
	sigset_t old;
	int e;

	memset(&sh, 0, sizeof(sh));
	memset(st, 0, sizeof(*st));
	sh.o = o;
	sh.n = o->threads ? o->threads : 1;
	sh.lfd = -1;
	sigprocmask(SIG_BLOCK, NULL, &old);
	stats_sample(&sh.t0);
	sh.loops = calloc(sh.n, sizeof(*sh.loops));
	e = sh.loops ? relay_shared_init(&sh) : -ENOMEM;
	if (!e)
		e = relay_run_loops(&sh, &ninit, &old);
	relay_metrics_stop(&sh);
	relay_sm_free(&sh);
	if (ninit)
		relay_loops_sum(&sh, st);
	for (i = 0; i < ninit; i++)
		relay_loop_free(&sh.loops[i]);
	free(sh.loops);
	if (sh.lfd >= 0)
		close(sh.lfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return e;
}

const char *relay_mode_name(enum relay_mode m)
{
	static const char *const names[] = { "splice", "rw", "sockmap" };

	return (unsigned int)m < sizeof(names) / sizeof(names[0]) ?
	       names[m] : "?";
}

void relay_defaults(struct relay_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->listen_fd = -1;
	o->mode = DND_RELAY_SPLICE;
	o->pipe_size = DND_RELAY_PIPE_DEFAULT;
	o->max_conn = 1024;
	o->max_pipes = 2048;
	o->threads = 1;
	o->maxevents = 256;
	o->buf_size = 64 * 1024;
	o->connect_timeout = 5;
	o->grace = 10;
	o->out = stdout;
}
