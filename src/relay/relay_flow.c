// SPDX-License-Identifier: MIT
/*
 * A relay flow from connected to closed: epoll interest that follows its
 * pipes, its socket events, a broken side's flush, and its end [hap].
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/net.h"
#include "core/pipe.h"
#include "relay/evloop.h"
#include "relay/relay_accept.h"
#include "relay/relay_flow.h"
#include "relay/relay_pump.h"
#include "relay/relay_sockmap.h"

void relay_flow_count(struct relay *r, int delta)
{
	struct relay_shared *sh = r->sh;
	uint_fast64_t n, peak;

	if (delta < 0) {
		r->nflows--;
		r->st->active--;
		atomic_fetch_sub(&r->load, 1);
		atomic_fetch_sub(&sh->active, 1);
		return;
	}
	atomic_fetch_add(&r->load, 1);
	r->nflows++;
	if (++r->st->active > r->st->peak_active)
		r->st->peak_active = r->st->active;
	n = atomic_fetch_add(&sh->active, 1) + 1;
	peak = atomic_load(&sh->peak_active);
	while (n > peak &&
	       !atomic_compare_exchange_weak(&sh->peak_active, &peak, n))
		;
}

/*
 * Keeps l ordered by f->last, so the timers look at the head only. Nearly
 * every flow comes with last = now and lands at the tail at once; a waiting
 * flow that failed again keeps its accept time and goes back in its place.
 */
void relay_list_add(struct relay_list *l, struct relay_flow *f)
{
	struct relay_flow *after = l->tail;

	while (after && after->last > f->last)
		after = after->prev;
	f->list = l;
	f->prev = after;
	f->next = after ? after->next : l->head;
	if (f->next)
		f->next->prev = f;
	else
		l->tail = f;
	if (after)
		after->next = f;
	else
		l->head = f;
}

void relay_list_del(struct relay_flow *f)
{
	struct relay_list *l = f->list;

	if (!l)
		return;
	if (f->prev)
		f->prev->next = f->next;
	else
		l->head = f->next;
	if (f->next)
		f->next->prev = f->prev;
	else
		l->tail = f->prev;
	f->prev = f->next = NULL;
	f->list = NULL;
}

/* Gives a direction's pipe back, or kills it when bytes are stuck inside. */
static void relay_dir_free(struct relay *r, struct relay_dir *d)
{
	if (d->pipe)
		pipe_put(&r->pool, d->pipe, d->count);
	d->pipe = NULL;
	relay_buf_put(r, d);
}

void relay_close_sock(struct relay *r, int fd, bool reset)
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

void relay_flow_close(struct relay *r, struct relay_flow *f,
			     enum relay_close how)
{
	bool reset = how != DND_RELAY_FIN;

	relay_sm_end(r, f);
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
	case DND_RELAY_ERROR:
		r->st->errors++;
		break;
	}
	relay_close_sock(r, f->fd[0], reset);
	relay_close_sock(r, f->fd[1], reset);
	relay_dir_free(r, &f->dir[0]);
	relay_dir_free(r, &f->dir[1]);
	relay_list_del(f);
	free(f);
	relay_flow_count(r, -1);
	relay_listen_on(r);
}

/*
 * Forgets a flow whose target side is already gone. The client gets a
 * reset: whatever it sent was not delivered, and a FIN would tell an
 * uploading client that it was.
 */
void relay_flow_drop(struct relay *r, struct relay_flow *f)
{
	relay_close_sock(r, f->fd[0], true);
	relay_list_del(f);
	free(f);
	relay_flow_count(r, -1);
	relay_listen_on(r);
}

void relay_flow_fail(struct relay *r, struct relay_flow *f, int err)
{
	r->st->failed++;
	if (!atomic_exchange(&r->sh->told_connect, true))
		log_err("relay: cannot connect to %s: %s; the client is reset "
			"(further failures are only counted)",
			r->sh->target_name, strerror(-err));
	relay_close_sock(r, f->fd[1], true);
	f->fd[1] = -1;
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
		/* Also after a spent budget: level-triggered EPOLLOUT
		 * comes back. */
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
void relay_flow_flush(struct relay *r, struct relay_flow *f)
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

/*
 * The relay itself failed on f (not one of its peers): say so once, then
 * reset both sides, so that neither takes a cut flow for a complete one.
 */
void relay_flow_error(struct relay *r, struct relay_flow *f, int err)
{
	if (!atomic_exchange(&r->sh->told_error, true))
		log_err("relay: a flow failed inside the relay: %s; both "
			"sides were reset (further errors are only counted)",
			strerror(-err));
	relay_flow_close(r, f, DND_RELAY_ERROR);
}

void relay_flow_after(struct relay *r, struct relay_flow *f, int err)
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
		relay_flow_error(r, f, err);
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
void relay_tune(const struct relay *r, int fd)
{
	int one = 1, lowat = (int)r->o->rcvlowat;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof(one));
	if (lowat > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
}

void relay_flow_open(struct relay *r, struct relay_flow *f)
{
	f->last = r->el.now;
	relay_list_del(f);
	relay_list_add(&r->open, f);
	relay_tune(r, f->fd[1]);
	if (r->sh->mode == DND_RELAY_SOCKMAP)
		relay_sm_open(r, f);
	else
		relay_flow_after(r, f, 0);
}
