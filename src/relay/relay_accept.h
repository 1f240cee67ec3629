/* SPDX-License-Identifier: MIT */
/*
 * How relay flows begin: the listener (paused at --max-conn and when fds
 * run out), accept, and the non-blocking connect to the target.
 */
#ifndef DND_RELAY_ACCEPT_H
#define DND_RELAY_ACCEPT_H

#include "relay/relay_types.h"

/*
 * The listener's read callback (data: struct relay *): accepts a batch of
 * clients and starts each flow's connect to the target, or, with several
 * loops, hands a client to the least loaded one.
 */
void relay_on_accept(struct evloop *el, int fd, void *data,
		     unsigned int fired);

/*
 * Puts the listener back in epoll unless it must stay paused (draining, at
 * --max-conn, clients still waiting for an fd). Returns nothing: a failed
 * epoll_ctl leaves it paused until the next try.
 */
void relay_listen_on(struct relay *r);

/*
 * Starts flows for the clients other loops handed r (r's eventfd said so);
 * resets them when r drains.
 */
void relay_take_handed(struct relay *r);

/* Clients that got no target socket (r->waiting) try again, oldest first. */
void relay_retry_waiting(struct relay *r);

#endif
