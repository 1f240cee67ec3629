// SPDX-License-Identifier: MIT
/*
 * -m sockmap: each flow's two sockets sit in a BPF sockmap, and the
 * kernel redirects what one receives to the other's send side (softirq,
 * then a kworker when the send queue is full). The relay wakes only for a
 * side's FIN or reset, never per chunk.
 *
 * The end of a flow. A socket in a sockmap with a verdict program still
 * gets its FIN the usual way: tcp_fin() sets RCV_SHUTDOWN and wakes epoll
 * (EPOLLRDHUP), while the bytes before it are redirected asynchronously
 * (to the peer's psock queue, sent by a kworker). So a FIN seen is not yet
 * a FIN to pass on: the relay waits until the other socket's send queue
 * has taken every byte this side received -- TCP_INFO's bytes_received
 * (the FIN counts one) against bytes_acked + SIOCOUTQ of the other socket
 * since pairing -- and only then shuts it down for writing. A side that
 * broke (reset) is treated as in splice mode: what it sent is handed on
 * first, then both get a reset (relay_flow.c's flush).
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/net.h"
#include "core/net_bytes.h"
#include "relay/evloop.h"
#include "relay/relay_bpf.h"
#include "relay/relay_flow.h"
#include "relay/relay_sockmap.h"

int relay_sm_init(struct relay_shared *sh)
{
	const struct relay_opts *o = sh->o;
	char why[512];

	sh->mode = o->mode;
	if (o->mode != DND_RELAY_SOCKMAP)
		return 0;
	if (relay_bpf_open(2 * o->max_conn, &sh->bpf, why, sizeof(why))) {
		log_err("relay: %s", why);
		return -ENOPKG;
	}
	if (!o->quiet)
		log_warn("relay: -m sockmap: the kernel queues what it cannot "
			 "send yet without bound, so a reader that stalls lets "
			 "its peer fill kernel memory; use it only where both "
			 "ends keep reading (see dnd-relay(1), THE SOCKMAP PATH)");
	return 0;
}

void relay_sm_free(struct relay_shared *sh)
{
	relay_bpf_close(sh->bpf);
	sh->bpf = NULL;
}

int relay_sm_loop_init(struct relay *r)
{
	unsigned int i, base = 0;

	if (!r->sh->bpf)
		return 0;
	for (i = 0; i < r->id; i++)
		base += 2 * r->sh->loops[i].max_conn;
	r->slots = calloc(2 * (size_t)r->max_conn, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	/* Popped from the top: the lowest slots first. */
	for (i = 0; i < 2 * r->max_conn; i++)
		r->slots[i] = base + 2 * r->max_conn - 1 - i;
	r->nslots = 2 * r->max_conn;
	return 0;
}

/*
 * Every byte fd[i] received is in fd[!i]'s send queue: bytes_acked is read
 * before SIOCOUTQ, so an ACK in between only makes the sum smaller (never
 * a FIN too early).
 */
static bool relay_sm_handed(const struct relay_flow *f, int i)
{
	uint64_t acked, rcvd, unused;
	int q;

	if (net_tcp_bytes(f->fd[!i], &acked, &unused))
		return false;
	q = net_outq(f->fd[!i]);
	if (q < 0 || net_tcp_bytes(f->fd[i], &unused, &rcvd))
		return false;
	if (f->dir[i].eof && rcvd)
		rcvd--;		/* the FIN */
	return acked + (uint64_t)q - f->base[!i] >= rcvd;
}

/* fd[s] broke: the first error is kept. */
static void relay_sm_broken(struct relay *r, struct relay_flow *f, int s,
			    int err)
{
	if (!f->err[s])
		f->err[s] = err;
}

/* What has moved: both counts and what both peers acknowledged. */
static uint64_t relay_sm_progress(struct relay *r, struct relay_flow *f)
{
	struct relay_bpf_count c;
	uint64_t sum = 0, acked, rcvd;
	int i;

	for (i = 0; i < 2; i++) {
		relay_bpf_count(r->sh->bpf, f->slot[i], &c);
		sum += c.fwd;
		if (!net_tcp_bytes(f->fd[i], &acked, &rcvd))
			sum += acked;
	}
	return sum;
}

static void relay_sm_move(struct relay *r, struct relay_flow *f,
			  struct relay_list *to)
{
	if (f->list == to)
		return;
	relay_list_del(f);
	relay_list_add(to, f);
}

/*
 * Passes each ended side's FIN on once its bytes are handed over; ends the
 * flow when both are, or flushes and resets it when a side broke. f may be
 * freed.
 */
static void relay_sm_after(struct relay *r, struct relay_flow *f)
{
	bool wait = false;
	int i;

	for (i = 0; i < 2; i++) {
		struct relay_dir *d = &f->dir[i];

		if (d->shut || !(d->eof || f->err[i]) || f->err[!i])
			continue;
		if (!relay_sm_handed(f, i)) {
			wait = true;
			continue;
		}
		if (f->err[i]) {
			d->shut = true;	/* handed on; the flush resets */
			continue;
		}
		if (shutdown(f->fd[!i], SHUT_WR) && errno != ENOTCONN) {
			relay_sm_broken(r, f, !i, -errno);
			continue;
		}
		d->shut = true;
	}
	if (f->err[0] && f->err[1]) {
		relay_flow_close(r, f, DND_RELAY_RESET);
		return;
	}
	if ((f->err[0] && f->dir[0].shut) || (f->err[1] && f->dir[1].shut)) {
		relay_flow_flush(r, f);
		return;
	}
	if (!f->err[0] && !f->err[1] && f->dir[0].shut && f->dir[1].shut) {
		relay_flow_close(r, f, DND_RELAY_FIN);
		return;
	}
	relay_sm_move(r, f, wait ? &r->handing : &r->open);
}

/*
 * A side's FIN (EPOLLRDHUP), reset or hangup, or bytes the program left
 * on it (EPOLLIN). After a FIN the socket is watched for errors only;
 * after a hangup or an error not at all (they would fire forever).
 */
static void relay_sm_on_event(struct evloop *el, int fd, void *data,
			      unsigned int fired)
{
	struct relay_flow *f = data;
	struct relay *r = f->r;
	int s = fd == f->fd[1], e = 0;
	struct relay_bpf_count c;
	socklen_t len = sizeof(e);

	/* Bytes that stayed on this socket (they raise EPOLLIN; redirected
	 * ones do not): the flow cannot go on in order. */
	relay_bpf_count(r->sh->bpf, f->slot[s], &c);
	if (c.passed) {
		relay_flow_error(r, f, -EPROTO);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == -1)
		e = errno;
	if (e) {
		relay_sm_broken(r, f, s, -e);
		evloop_set(el, fd, 0, NULL, NULL, NULL);
	} else if (fired & DND_EV_RDHUP) {
		f->dir[s].eof = true;
		evloop_set(el, fd, (fired & DND_EV_ERR) ? 0 : DND_EV_ERR,
			   NULL, NULL, NULL);
	} else if (fired & DND_EV_ERR) {
		f->hup[s] = true;
		evloop_set(el, fd, 0, NULL, NULL, NULL);
	} else {
		return;	/* EPOLLIN seen mid-redirect, nothing left here */
	}
	relay_sm_after(r, f);
}

void relay_sm_open(struct relay *r, struct relay_flow *f)
{
	struct relay_bpf_count c[2];
	uint64_t rcvd;
	int e = 0, i, q;

	if (r->nslots < 2) {
		relay_flow_error(r, f, -ENOSPC);
		return;
	}
	for (i = 0; i < 2 && !e; i++) {
		q = net_outq(f->fd[i]);
		e = q < 0 ? q : net_tcp_bytes(f->fd[i], &f->base[i], &rcvd);
		f->base[i] += (uint64_t)(q > 0 ? q : 0);
	}
	if (e) {
		relay_flow_error(r, f, e);
		return;
	}
	f->slot[0] = r->slots[--r->nslots];
	f->slot[1] = r->slots[--r->nslots];
	f->paired = true;
	e = relay_bpf_pair(r->sh->bpf, f->fd, f->slot, f->cookie);
	for (i = 0; i < 2 && !e; i++)
		e = evloop_set(&r->el, f->fd[i], DND_EV_READ, relay_sm_on_event,
			       relay_sm_on_event, f);
	if (e) {
		relay_flow_error(r, f, e);
		return;
	}
	/* Bytes that came before their peer was in the map stayed behind:
	 * forwarding them now could reorder the stream, so the flow ends. */
	relay_bpf_count(r->sh->bpf, f->slot[0], &c[0]);
	relay_bpf_count(r->sh->bpf, f->slot[1], &c[1]);
	if (c[0].passed || c[1].passed) {
		relay_flow_error(r, f, -EPROTO);
		return;
	}
	relay_sm_after(r, f);
}

void relay_sm_end(struct relay *r, struct relay_flow *f)
{
	struct relay_bpf_count c;
	int i;

	if (!f->paired)
		return;
	for (i = 0; i < 2; i++) {
		relay_bpf_count(r->sh->bpf, f->slot[i], &c);
		f->sent[i] = c.fwd;
		r->st->bytes[i] += c.fwd;
		r->live[i] -= f->live[i];	/* now inside bytes[i] */
		f->live[i] = 0;
		r->slots[r->nslots++] = f->slot[i];
	}
	relay_bpf_unpair(r->sh->bpf, f->slot, f->cookie);
	f->paired = false;
}

bool relay_sm_moved(struct relay *r, struct relay_flow *f)
{
	uint64_t now = relay_sm_progress(r, f);
	struct relay_list *l = f->list;

	if (now == f->seen)
		return false;
	f->seen = now;
	f->last = r->el.now;
	relay_list_del(f);
	relay_list_add(l, f);
	return true;
}

/* Adds what the program forwarded since the last tick for f in list l. */
static void relay_sm_live_list(struct relay *r, struct relay_list *l)
{
	struct relay_bpf_count c;
	struct relay_flow *f;
	int i;

	for (f = l->head; f; f = f->next)
		for (i = 0; f->paired && i < 2; i++) {
			relay_bpf_count(r->sh->bpf, f->slot[i], &c);
			if (c.fwd <= f->live[i])
				continue;
			r->live[i] += c.fwd - f->live[i];
			f->live[i] = c.fwd;
		}
}

void relay_sm_live(struct relay *r)
{
	relay_sm_live_list(r, &r->open);
	relay_sm_live_list(r, &r->handing);
}

void relay_sm_check(struct relay *r)
{
	struct relay_flow *f, *next;

	for (f = r->handing.head; f; f = next) {
		next = f->next;
		relay_sm_after(r, f);
	}
	while (r->o->idle_timeout > 0 && (f = r->handing.head) &&
	       r->el.now - f->last >= r->o->idle_timeout)
		if (!relay_sm_moved(r, f))
			relay_flow_close(r, f, DND_RELAY_IDLE);
}
