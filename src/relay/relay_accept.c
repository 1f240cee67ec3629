// SPDX-License-Identifier: MIT
/*
 * Flows in: the listener, accept in batches, the target's non-blocking
 * connect, and what happens when fds or memory run out (the client waits,
 * the listener rests) rather than turning clients away.
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "relay/evloop.h"
#include "relay/relay_accept.h"
#include "relay/relay_flow.h"

#define DND_RELAY_ACCEPT_BATCH 64
#define DND_RELAY_EMFILE_PAUSE 0.1	/* seconds the listener rests */

void relay_listen_on(struct relay *r)
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
		relay_close_sock(r, cfd, true);
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
void relay_retry_waiting(struct relay *r)
{
	struct relay_flow *f;

	while ((f = r->waiting.head))
		if (relay_connect(r, f))
			break;
	relay_listen_on(r);
}

void relay_on_accept(struct evloop *el, int fd, void *data,
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
