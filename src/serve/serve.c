// SPDX-License-Identifier: MIT
/*
 * dnd serve's parent: listens, holds each new connection until its client
 * is through the opening, then forks a child for it (the request, the
 * verdict, the transfer run there); reaps children and prints their log
 * lines, keeps the session slots honest, and stops gracefully. With a key
 * the parent runs the preambles and the TLS handshake itself, one
 * non-blocking step a poll (serve_wait.c), so a stranger who cannot prove
 * the key never gets a process; keyless, where there is no proof, the
 * client's first byte is enough. Either way a connection costs an fd and a
 * poll slot until then, each address holds at most --max-pending-per-source
 * of them, and a full table loses the oldest of its heaviest address.
 */
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/net.h"
#include "core/stats.h"
#include "serve/handshake.h"
#include "serve/serve.h"
#include "serve/serve_log.h"
#include "serve/serve_wait.h"

struct kid {
	pid_t pid;
	int logfd;		/* the child's log line comes through here */
	double t0;
	bool killed;		/* to make room: no more a pending one */
	uint8_t src[16];	/* as serve_waiting's */
	char peer[96];
};

struct server {
	const struct serve_opts *o;
	struct serve_ctx ctx;
	int lfd, sfd;
	unsigned int cap, n;
	struct kid *kids;
	unsigned int wait_max, nwait;	/* oldest first */
	double accept_rest;		/* out of fds: no accept before */
	struct serve_waiting *wait;
	struct serve_src *srcs;		/* scratch: wait_max + cap */
	struct pollfd *pfd;		/* 2 + wait_max */
	bool stopping;
	double stop_at;
	struct dnd_metrics *metrics;
	struct serve_log log;
	struct {
		uint64_t accepted, refused_allow, sessions, ok, failed, lost;
		uint64_t pushed_bytes, pulled_bytes;
	} count;
};

/* --metrics: the counters as Prometheus text, published after a change. */
static void serve_publish(const struct server *sv)
{
	struct metrics_text t = { 0 };
	char lab[32];

	if (!sv->metrics)
		return;
	metrics_add(&t, "serve_connections_total", "counter", "Connections "
		    "accepted.", NULL, (double)sv->count.accepted);
	metrics_add(&t, "serve_refused_total", "counter", "Connections "
		    "refused, by cause.", "cause=\"allow\"",
		    (double)sv->count.refused_allow);
	metrics_add(&t, "serve_sessions_total", "counter", "Sessions that "
		    "ended, by outcome.", "outcome=\"ok\"", (double)sv->count.ok);
	metrics_add(&t, "serve_sessions_total", NULL, NULL,
		    "outcome=\"failed\"", (double)sv->count.failed);
	metrics_add(&t, "serve_sessions_total", NULL, NULL,
		    "outcome=\"killed\"", (double)sv->count.lost);
	metrics_add(&t, "serve_children", "gauge", "Session and handshake "
		    "processes alive.", NULL, sv->n);
	metrics_add(&t, "serve_waiting", "gauge", "Connections accepted "
		    "whose client is not through the opening yet (no process "
		    "yet).", NULL, sv->nwait);
	snprintf(lab, sizeof(lab), "direction=\"push\"");
	metrics_add(&t, "serve_bytes_total", "counter", "Payload bytes of "
		    "the sessions that ended.", lab,
		    (double)sv->count.pushed_bytes);
	metrics_add(&t, "serve_bytes_total", NULL, NULL,
		    "direction=\"pull\"", (double)sv->count.pulled_bytes);
	if (!t.oom && t.buf)
		metrics_publish(sv->metrics, t.buf);
	metrics_text_free(&t);
}

/* Counts one child's tally (a session or a handshake that failed). */
static void serve_tally(struct server *sv, const struct serve_tally *t)
{
	if (t->ran)
		sv->count.sessions++;
	if (t->ok)
		sv->count.ok++;
	else
		sv->count.failed++;
	if (t->pull)
		sv->count.pulled_bytes += t->bytes;
	else
		sv->count.pushed_bytes += t->bytes;
}

/* A line for a child that could not say how it ended. */
static void serve_log_lost(struct server *sv, const struct kid *k, int st,
			   int swept)
{
	char what[160], more[64] = "";

	if (swept > 0)
		snprintf(more, sizeof(more), "; its temporary file is removed");
	else if (swept < 0)
		snprintf(more, sizeof(more), "; its temporary file stays: %s",
			 strerror(-swept));
	if (WIFSIGNALED(st))
		snprintf(what, sizeof(what), "the session process was killed "
			 "by %s%s", strsignal(WTERMSIG(st)), more);
	else
		snprintf(what, sizeof(what), "the session process exited %d "
			 "without a log line%s", WEXITSTATUS(st), more);
	serve_log_failed(&sv->log, k->peer, stats_now() - k->t0, what, false);
}

static void serve_reaped(struct server *sv, pid_t pid, int st)
{
	char line[sizeof(struct serve_tally) + SERVE_LOG_MAX];
	unsigned int i;
	int swept = 0;
	ssize_t got;

	for (i = 0; i < sv->o->max_sessions; i++) {
		pid_t want = pid;

		/* A session that died landing left its temporary file. */
		if (__atomic_load_n(&sv->ctx.slots[i], __ATOMIC_SEQ_CST) == pid) {
			swept = litter_sweep(&sv->ctx.dir, &sv->ctx.litter[i]);
			/* Its memory is free before its slot is. */
			__atomic_store_n(&sv->ctx.mem[i], 0, __ATOMIC_SEQ_CST);
		}
		__atomic_compare_exchange_n(&sv->ctx.slots[i], &want,
					    (pid_t)0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < sv->n && sv->kids[i].pid != pid; i++)
		;
	if (i == sv->n)
		return;
	got = read(sv->kids[i].logfd, line, sizeof(line) - 1);
	if (got > (ssize_t)sizeof(struct serve_tally)) {
		struct serve_tally t;

		memcpy(&t, line, sizeof(t));
		serve_tally(sv, &t);
		serve_log_child(&sv->log, sv->kids[i].peer, !t.ok && !t.ran,
				line + sizeof(t), (size_t)got - sizeof(t));
	} else {
		sv->count.lost++;
		serve_log_lost(sv, &sv->kids[i], st, swept);
	}
	close(sv->kids[i].logfd);
	sv->kids[i] = sv->kids[--sv->n];
	serve_publish(sv);
}

static void serve_reap(struct server *sv)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		serve_reaped(sv, pid, st);
}

static bool serve_in_session(const struct server *sv, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < sv->o->max_sessions; i++)
		if (__atomic_load_n(&sv->ctx.slots[i], __ATOMIC_SEQ_CST) == pid)
			return true;
	return false;
}

/* A child with no session slot yet, not already killed. */
static bool serve_pending(const struct server *sv, const struct kid *k)
{
	return !k->killed && !serve_in_session(sv, k->pid);
}

static void serve_kill(struct kid *k)
{
	kill(k->pid, SIGKILL);
	k->killed = true;
}

/*
 * Makes room for one more pending child (no slot yet): when
 * SERVE_PENDING_MAX are, the oldest of the address that has the most is
 * killed, so no client can keep the others out for long.
 */
static void serve_make_room(struct server *sv)
{
	unsigned int i, pending = 0;

	for (i = 0; i < sv->n; i++) {
		if (!serve_pending(sv, &sv->kids[i]))
			continue;
		memcpy(sv->srcs[pending].a, sv->kids[i].src, 16);
		sv->srcs[pending].t0 = sv->kids[i].t0;
		sv->srcs[pending++].i = i;
	}
	if (pending >= SERVE_PENDING_MAX)
		serve_kill(&sv->kids[serve_wait_heaviest(sv->srcs, pending)]);
}

/* Closes every fd but 0, 1, 2 and the n in keep (-1s are skipped). */
static void serve_close_all_but(int *keep, unsigned int n)
{
	unsigned int i, j, from = 3;
	int t;

	for (i = 1; i < n; i++)	/* a few: sorted by insertion */
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			close_range(from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

/* The child's half of the fork. */
static void serve_fork_child(struct server *sv, struct serve_waiting *w,
			     int logfd)
{
	int keep[] = { w->fd, logfd, sv->ctx.dir.dirfd };
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The listeners (ours, --metrics'), other clients' connections and
	 * other sessions' log pipes are none of this session's business. */
	serve_close_all_but(keep, sizeof(keep) / sizeof(keep[0]));
	fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) & ~O_NONBLOCK);
	if (w->hs.tls && chan_attach(w->fd, w->hs.tls))
		_exit(1);
	/* Not in the terminal's process group: ^C stops the parent, which
	 * then lets the sessions finish. */
	setpgid(0, 0);
	serve_child(&sv->ctx, w->fd, w->peer, logfd);
}

/* A waiting connection ends without a child: logged, counted, closed. */
static void serve_drop(struct server *sv, struct serve_waiting *w,
		       const char *what)
{
	if (!w->linger) {
		serve_log_failed(&sv->log, w->peer, stats_now() - w->t0, what,
				 false);
		sv->count.failed++;
	}
	serve_wait_close(w);
}

/* The stop: connections that have not spoken are closed unserved. */
static void serve_unwait(struct server *sv)
{
	unsigned int i;

	for (i = 0; i < sv->nwait; i++)
		serve_drop(sv, &sv->wait[i], "the server stopped before the "
			   "client's hello");
	sv->nwait = 0;
	serve_publish(sv);
}

/* Makes room in the waiting table: connection i is closed. */
static void serve_evict(struct server *sv, unsigned int i, const char *why)
{
	char what[200];

	snprintf(what, sizeof(what), "closed before its handshake ended: %s",
		 why);
	serve_drop(sv, &sv->wait[i], what);
	serve_wait_take(sv->wait, NULL, &sv->nwait, i);
}

/* The waiting connection to close for room: the oldest of the address
 * with the most. */
static unsigned int serve_heaviest_waiting(struct server *sv)
{
	unsigned int i;

	for (i = 0; i < sv->nwait; i++) {
		memcpy(sv->srcs[i].a, sv->wait[i].src, 16);
		sv->srcs[i].t0 = sv->wait[i].t0;
		sv->srcs[i].i = i;
	}
	return serve_wait_heaviest(sv->srcs, sv->nwait);
}

/*
 * --max-pending-per-source: before w joins the table, its address holds
 * fewer than the limit of the handshakes that have not proven anything:
 * those in the parent's table and, keyless, the children with no session
 * slot yet (keyed, a child has proven the key); its oldest goes to make
 * room.
 */
static void serve_limit_source(struct server *sv, const uint8_t *src)
{
	unsigned int i, n = 0, wi = sv->nwait, ki = sv->n;
	char what[160];

	for (i = 0; i < sv->nwait; i++) {
		if (memcmp(sv->wait[i].src, src, 16))
			continue;
		n++;
		if (wi == sv->nwait)	/* oldest first */
			wi = i;
	}
	for (i = 0; i < sv->n && !sv->ctx.keyed; i++) {
		if (memcmp(sv->kids[i].src, src, 16) ||
		    !serve_pending(sv, &sv->kids[i]))
			continue;
		n++;
		if (ki == sv->n || sv->kids[i].t0 < sv->kids[ki].t0)
			ki = i;
	}
	if (n < sv->o->max_pending_src)
		return;
	if (ki < sv->n && (wi == sv->nwait ||
			   sv->kids[ki].t0 < sv->wait[wi].t0)) {
		serve_kill(&sv->kids[ki]);
		return;
	}
	snprintf(what, sizeof(what), "its address has %u handshakes pending "
		 "(--max-pending-per-source)", n);
	serve_evict(sv, wi, what);
}

/* Up to 64 connections: refused at once by --allow, or held until their
 * opening is through (the oldest of the heaviest address closed when the
 * table is full). Out of fds, that one goes too; with none waiting, the
 * listener rests for 100 ms rather than spin on a queue it cannot take
 * from. */
static void serve_accept(struct server *sv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct serve_waiting w;
	char what[96];
	int fd, k;

	for (k = 0; k < 64; k++) {
		sl = sizeof(ss);
		fd = accept4(sv->lfd, (struct sockaddr *)&ss, &sl,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			if (!sv->nwait) {
				sv->accept_rest = stats_now() + 0.1;
				break;
			}
			serve_evict(sv, serve_heaviest_waiting(sv),
				    "out of file descriptors");
			continue;
		}
		if (fd < 0)
			break;
		sv->count.accepted++;
		if (sv->o->has_allow && !cidr_match(&sv->o->allow,
						    (struct sockaddr *)&ss, sl)) {
			net_addr_str((struct sockaddr *)&ss, sl, what,
				     sizeof(what));
			serve_log_failed(&sv->log, what, 0,
					 "refused: not in --allow", false);
			sv->count.refused_allow++;
			close(fd);
			continue;
		}
		serve_wait_init(&w, fd, (struct sockaddr *)&ss, sl,
				sv->ctx.keyed ? &sv->ctx.tls : NULL,
				stats_now());
		serve_limit_source(sv, w.src);
		if (sv->nwait == sv->wait_max) {
			snprintf(what, sizeof(what), "%u connections were "
				 "waiting, the most from its address",
				 sv->wait_max);
			serve_evict(sv, serve_heaviest_waiting(sv), what);
		}
		sv->wait[sv->nwait++] = w;
	}
	serve_publish(sv);
}

/* A client is through: its connection goes to a child of its own. It is
 * out of the waiting table by now, so the child closes all of that. */
static void serve_spawn(struct server *sv, struct serve_waiting *w)
{
	const char *peer = w->peer;
	int p[2];
	pid_t pid;

	while (sv->n >= sv->cap) {
		serve_make_room(sv);
		serve_reap(sv);
		if (sv->n >= sv->cap)
			usleep(1000);
	}
	serve_make_room(sv);
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		serve_wait_close(w);
		return;
	}
	pid = fork();
	if (pid == 0)
		serve_fork_child(sv, w, p[1]);
	close(p[1]);
	/* The child has the TLS session now; this copy is only memory. */
	serve_wait_close(w);
	if (pid < 0) {
		log_err("session %s: cannot fork: %s", peer, strerror(errno));
		close(p[0]);
		return;
	}
	sv->kids[sv->n] = (struct kid){ .pid = pid, .logfd = p[0],
					.t0 = stats_now() };
	memcpy(sv->kids[sv->n].src, w->src, 16);
	snprintf(sv->kids[sv->n].peer, sizeof(sv->kids[0].peer), "%s", peer);
	sv->n++;
}

/* SIGINT/SIGTERM: no more clients; handshakes end now, sessions within
 * the grace period, then SIGTERM (their landing aborts), then SIGKILL. */
static void serve_stop(struct server *sv)
{
	unsigned int i;

	if (!sv->stopping) {
		sv->stopping = true;
		sv->stop_at = stats_now() + sv->o->grace;
		close(sv->lfd);
		sv->lfd = -1;
		serve_unwait(sv);
		log_err("stopping: %u session(s) get %g s to finish", sv->n,
			sv->o->grace);
	}
	for (i = 0; i < sv->n; i++)
		if (serve_pending(sv, &sv->kids[i]))
			serve_kill(&sv->kids[i]);
}

/*
 * The waiting connections after a poll. First, in one pass, each takes its
 * step (serve_wait_poll): those that failed, ended or ran out of time are
 * logged and closed here, and the table is compacted with its poll slots.
 * Then up to 64 that are through leave the table, each before its fork,
 * and go to a child; more stay for the next round, so that signals and
 * the listener are heard in between. Returns whether any stayed.
 */
static bool serve_waited(struct server *sv)
{
	double now = stats_now();
	unsigned int i, k = 0, ready = 0, spawned = 0;
	struct serve_waiting w;
	enum serve_wait_st st;
	char what[320];
	bool changed = false;

	for (i = 0; i < sv->nwait; i++) {
		w = sv->wait[i];
		st = serve_wait_poll(&w, sv->pfd[2 + i].revents, now, what,
				     sizeof(what));
		if (st == SERVE_WAIT_DROP)
			serve_drop(sv, &w, what);
		if (st == SERVE_WAIT_FAILED) {
			serve_log_failed(&sv->log, w.peer, now - w.t0, what, true);
			sv->count.failed++;
			if (!w.linger)
				serve_wait_close(&w);
		}
		if (st == SERVE_WAIT_DROP || st == SERVE_WAIT_GONE ||
		    (st == SERVE_WAIT_FAILED && !w.linger)) {
			changed = true;
			continue;
		}
		ready += st == SERVE_WAIT_READY;
		sv->wait[k] = w;
		sv->pfd[2 + k].revents = sv->pfd[2 + i].revents;
		k++;
	}
	sv->nwait = k;
	if (changed)
		serve_publish(sv);
	/* Each fork changes both gauges, and up to 64 of them (each maybe
	 * waiting for room) take a while: published one by one. */
	for (i = 0; i < sv->nwait && ready && spawned < 64;) {
		if (!sv->wait[i].ready) {
			i++;
			continue;
		}
		w = serve_wait_take(sv->wait, sv->pfd + 2, &sv->nwait, i);
		ready--;
		spawned++;
		serve_spawn(sv, &w);
		serve_publish(sv);
	}
	return ready > 0;
}

static void serve_signals(struct server *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->sfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			serve_stop(sv);
	serve_reap(sv);
}

/* The stop's deadlines; true when every child is gone. */
static bool serve_drained(struct server *sv)
{
	double now = stats_now();
	unsigned int i;

	for (i = 0; i < sv->n; i++)
		if (now >= sv->stop_at)
			kill(sv->kids[i].pid, now >= sv->stop_at + 3 ?
			     SIGKILL : SIGTERM);
	return sv->n == 0;
}

static int serve_loop(struct server *sv)
{
	struct pollfd *pfd = sv->pfd;
	double now;
	unsigned int i;
	bool accept_now, more = false;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = sv->sfd, .events = POLLIN };
		/* Stopped: lfd is -1, which poll() skips; so is a listener
		 * resting after EMFILE. */
		pfd[1] = (struct pollfd){ .fd = stats_now() < sv->accept_rest ?
					  -1 : sv->lfd, .events = POLLIN };
		for (i = 0; i < sv->nwait; i++)
			pfd[2 + i] = (struct pollfd){
				.fd = sv->wait[i].ready ? -1 : sv->wait[i].fd,
				.events = sv->wait[i].events };
		if (poll(pfd, 2 + sv->nwait, more ? 0 : 200) < 0) {
			if (errno != EINTR)
				return 1;
			for (i = 0; i < 2 + sv->nwait; i++)
				pfd[i].revents = 0;
		}
		accept_now = sv->lfd >= 0 && pfd[1].revents & POLLIN;
		/* A stop first: it closes the waiting connections (and
		 * empties their table) rather than fork those that spoke. */
		if (pfd[0].revents)
			serve_signals(sv);
		more = serve_waited(sv);
		if (accept_now && sv->lfd >= 0)
			serve_accept(sv);
		serve_reap(sv);
		serve_log_tick(&sv->log, stats_now(), false);
		if (sv->stopping && serve_drained(sv))
			return 0;
		/* A handshake that outlived its deadline (a stopped child). */
		now = stats_now();
		for (i = 0; i < sv->n; i++)
			if (now - sv->kids[i].t0 > DND_HS_TIMEOUT + 5 &&
			    serve_pending(sv, &sv->kids[i]))
				serve_kill(&sv->kids[i]);
	}
}

/* --allow holds for /metrics too (in the HTTP thread: o is read-only). */
static bool serve_scraper_allowed(const struct sockaddr *sa, socklen_t sl,
				  void *arg)
{
	const struct serve_opts *o = arg;

	return cidr_match(&o->allow, sa, sl);
}

/* The listening socket, the signals and the tables. 0 or 1. */
static int serve_setup(struct server *sv)
{
	const struct serve_opts *o = sv->o;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char err[256], at[96];
	sigset_t set;

	sv->cap = o->max_sessions + SERVE_PENDING_MAX;
	sv->kids = calloc(sv->cap, sizeof(*sv->kids));
	sv->wait_max = serve_wait_max(sv->cap + 64);
	sv->wait = calloc(sv->wait_max, sizeof(*sv->wait));
	sv->srcs = calloc(sv->wait_max + sv->cap, sizeof(*sv->srcs));
	sv->pfd = calloc(2 + sv->wait_max, sizeof(*sv->pfd));
	sv->ctx.slots = mmap(NULL, o->max_sessions * sizeof(pid_t),
			     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			     -1, 0);
	sv->ctx.litter = mmap(NULL, o->max_sessions * sizeof(*sv->ctx.litter),
			      PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sv->ctx.mem = mmap(NULL, o->max_sessions * sizeof(*sv->ctx.mem),
			   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			   -1, 0);
	if (!sv->kids || !sv->wait || !sv->srcs || !sv->pfd ||
	    sv->ctx.slots == MAP_FAILED || sv->ctx.litter == MAP_FAILED ||
	    sv->ctx.mem == MAP_FAILED) {
		log_err("out of memory");
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sv->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	net_use_mptcp(o->mptcp);	/* the sessions' listener only */
	sv->lfd = net_listen_nb(o->bind, o->port, 1024, err, sizeof(err));
	net_use_mptcp(false);
	if (sv->lfd < 0 || sv->sfd < 0) {
		log_err("%s", sv->lfd < 0 ? err : "signalfd failed");
		return 1;
	}
	if (getsockname(sv->lfd, (struct sockaddr *)&ss, &sl) == 0) {
		net_addr_str((struct sockaddr *)&ss, sl, at, sizeof(at));
		log_err("listening on %s", at);
	}
	if (!sv->ctx.keyed)
		log_err("no --key: only loopback peers are served, in clear "
			"text (with --key or --cert every connection is TLS "
			"1.3)");
	if (o->has_metrics) {
		sv->metrics = metrics_start(o->metrics.host[0] ?
					    o->metrics.host : NULL,
					    o->metrics.port, o->has_allow ?
					    serve_scraper_allowed : NULL,
					    (void *)o, at, sizeof(at), err,
					    sizeof(err));
		if (!sv->metrics) {
			log_err("--metrics: %s", err);
			return 1;
		}
		log_err("metrics on http://%s/metrics", at);
		serve_publish(sv);
	}
	return 0;
}

int serve_run(const struct serve_opts *o)
{
	struct server sv = { .o = o, .lfd = -1, .sfd = -1 };
	char why[320];
	int code;

	sv.ctx.o = o;
	if (confine_open(&sv.ctx.dir, o->dir, why, sizeof(why))) {
		log_err("cannot serve %s: %s", o->dir, why);
		return 2;
	}
	sv.ctx.keyed = key_files_given(&o->keys);
	if (key_tls_cfg(&o->keys, &sv.ctx.key, &sv.ctx.tls, why,
			sizeof(why))) {
		log_err("%s", why);
		confine_close(&sv.ctx.dir);
		return 2;
	}
	if (serve_log_open(&sv.log, o->log, o->json, o->log_burst, why,
			   sizeof(why))) {
		log_err("%s", why);
		key_free(sv.ctx.key);
		confine_close(&sv.ctx.dir);
		return 2;
	}
	code = serve_setup(&sv);
	if (!code)
		code = serve_loop(&sv);
	if (sv.lfd >= 0)
		close(sv.lfd);
	if (sv.sfd >= 0)
		close(sv.sfd);
	serve_unwait(&sv);
	metrics_stop(sv.metrics);
	free(sv.wait);
	free(sv.srcs);
	free(sv.pfd);
	free(sv.kids);
	key_free(sv.ctx.key);
	confine_close(&sv.ctx.dir);
	serve_log_tick(&sv.log, stats_now(), true);
	if (!code)
		log_err("stopped");
	serve_log_close(&sv.log);
	return code;
}
