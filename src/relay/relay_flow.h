/* SPDX-License-Identifier: MIT */
/*
 * A relay flow's life once both sockets exist: its lists, its epoll
 * interest, its events, and how it ends (FIN, reset, idle, grace, error).
 */
#ifndef DND_RELAY_FLOW_H
#define DND_RELAY_FLOW_H

#include "relay/relay_types.h"

/* How a flow ended; each is counted in its own relay_stats field. */
enum relay_close {
	DND_RELAY_FIN = 0,	/* both directions ended cleanly: completed */
	DND_RELAY_RESET,	/* a side broke; the other gets a reset too */
	DND_RELAY_IDLE,		/* --idle-timeout */
	DND_RELAY_GRACE,	/* still open when the grace period ended */
	DND_RELAY_ERROR,	/* the relay failed (no memory, an fd it cannot
				 * use): both sides get a reset */
};

/*
 * Adds f to l, keeping l ordered by f->last (oldest first), so timers look
 * at the head only. f must be in no list.
 */
void relay_list_add(struct relay_list *l, struct relay_flow *f);

/* Takes f out of its list, if it is in one. */
void relay_list_del(struct relay_flow *f);

/*
 * A flow begins (delta 1) or ends (-1) in r: its count, the loop's active
 * and peak counters and the ones of all loops (atomic).
 */
void relay_flow_count(struct relay *r, int delta);

/*
 * Ends f as how says: counts it, closes both sockets (with a reset unless
 * how is DND_RELAY_FIN, taking what the reset throws away back out of the
 * delivered bytes), gives its pipes back, frees f and may resume the
 * listener. f is invalid afterwards.
 */
void relay_flow_close(struct relay *r, struct relay_flow *f,
		      enum relay_close how);

/*
 * Frees a flow whose target socket is already gone and resets the client
 * (what it sent went nowhere, so it must not see a clean end).
 */
void relay_flow_drop(struct relay *r, struct relay_flow *f);

/*
 * The target could not be reached (err: -errno, logged the first time):
 * closes the target socket and resets the client. Counts r->st->failed.
 */
void relay_flow_fail(struct relay *r, struct relay_flow *f, int err);

/*
 * Decides what f does after its sockets moved: close with a FIN when both
 * directions are shut, flush then reset when a side broke, else follow its
 * pipes with epoll interest. err (-errno from relay_pump()) is a failure of
 * the relay itself: f is closed with DND_RELAY_ERROR. f may be freed.
 */
void relay_flow_after(struct relay *r, struct relay_flow *f, int err);

/*
 * f has a broken side whose input has been handed on: out of epoll, it
 * waits in r->flushing until the other socket's send queue is empty (or
 * stops shrinking), then both sides get a reset.
 */
void relay_flow_flush(struct relay *r, struct relay_flow *f);

/*
 * The relay itself failed on f (err: -errno): says so once, then resets
 * both sides (DND_RELAY_ERROR). f is freed.
 */
void relay_flow_error(struct relay *r, struct relay_flow *f, int err);

/*
 * The target is connected: f moves to r->open, its target socket is tuned
 * like the client's, and its events start. f may be freed (see above).
 */
void relay_flow_open(struct relay *r, struct relay_flow *f);

/*
 * Takes fd out of the loop and closes it; reset: with SO_LINGER 0, so the
 * peer gets a reset instead of a FIN. fd -1 is ignored.
 */
void relay_close_sock(struct relay *r, int fd, bool reset);

/* TCP_NODELAY, SO_OOBINLINE (urgent bytes stay in the stream and are
 * forwarded) and --rcvlowat on a flow's socket; failures are harmless. */
void relay_tune(const struct relay *r, int fd);

#endif
