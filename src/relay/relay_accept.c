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
#include "relay/relay_loop.h"

#define DND_RELAY_ACCEPT_BATCH 64
#define DND_RELAY_EMFILE_PAUSE 0.1	/* seconds the listener rests */

void relay_listen_on(struct relay *r)
{
	if (!r->paused || r->draining || r->lfd < 0 ||
	    r->nflows >= r->max_conn || r->waiting.head)
		return;
	if (!evloop_set(&r->el, r->lfd, r->lmask, NULL, NULL, NULL))
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
	if (!atomic_exchange(&r->sh->told_accept, true))
		log_warn("relay: %s; new connections wait (raise ulimit -n "
			 "or lower --max-conn)", strerror(-err));
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

	sfd = net_connect_nb((struct sockaddr *)&r->sh->target,
			     r->sh->target_len,
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

	r->st->accepted++;
	if (!f) {
		relay_fd_short(r, -ENOMEM);
		relay_close_sock(r, cfd, true);
		return;
	}
	f->r = r;
	f->fd[0] = cfd;
	f->fd[1] = -1;
	f->last = r->el.now;
	relay_flow_count(r, 1);
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

/*
 * With several loops, the least loaded one gets the client: EPOLLEXCLUSIVE
 * wakes the first sleeping loop in the listener's wait queue, and the loop
 * that has the CPU takes the rest of a burst, so who accepts says little.
 * Returns true when cfd went to another loop's inbox.
 */
static bool relay_hand_off(struct relay *r, int cfd)
{
	struct relay_shared *sh = r->sh;
	struct relay *to = r;
	struct relay_inbox *box;
	unsigned int i, least = atomic_load(&r->load), l, tail;

	if (sh->n < 2 || atomic_load(&sh->drain))
		return false;
	for (i = 0; i < sh->n; i++) {
		l = atomic_load(&sh->loops[i].load);
		if (l < least && l < sh->loops[i].max_conn) {
			least = l;
			to = &sh->loops[i];
		}
	}
	if (to == r)
		return false;
	box = &to->inbox[r->id];
	tail = atomic_load_explicit(&box->tail, memory_order_relaxed);
	if (tail - atomic_load_explicit(&box->head, memory_order_acquire) >=
	    DND_RELAY_INBOX)
		return false;
	box->fd[tail % DND_RELAY_INBOX] = cfd;
	atomic_store_explicit(&box->tail, tail + 1, memory_order_release);
	atomic_fetch_add(&to->load, 1);
	relay_wake(to);
	return true;
}

void relay_take_handed(struct relay *r)
{
	unsigned int i, head;

	for (i = 0; r->inbox && i < r->sh->n; i++) {
		struct relay_inbox *box = &r->inbox[i];

		head = atomic_load_explicit(&box->head, memory_order_relaxed);
		while (head != atomic_load_explicit(&box->tail,
						    memory_order_acquire)) {
			int cfd = box->fd[head % DND_RELAY_INBOX];

			atomic_store_explicit(&box->head, ++head,
					      memory_order_release);
			atomic_fetch_sub(&r->load, 1);
			/* Too late to serve it: it was never read from. */
			if (r->draining)
				relay_close_sock(r, cfd, true);
			else
				relay_flow_start(r, cfd);
		}
	}
}

void relay_on_accept(struct evloop *el, int fd, void *data,
		     unsigned int fired)
{
	struct relay *r = data;
	int i, cfd;

	for (i = 0; i < DND_RELAY_ACCEPT_BATCH && !r->paused; i++) {
		if (r->nflows >= r->max_conn) {
			relay_listen_off(r, 0);
			return;
		}
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd >= 0) {
			if (!relay_hand_off(r, cfd))
				relay_flow_start(r, cfd);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* Not listening any more: another loop began the drain. */
		if (errno == EINVAL) {
			relay_begin_drain(r);
			return;
		}
		if (relay_out_of_fds(-errno)) {
			/* The connection stays queued, and level-triggered
			 * epoll would spin on it: rest the listener. */
			relay_fd_short(r, -errno);
			return;
		}
		/* ECONNABORTED and friends concern one connection only. */
	}
}
