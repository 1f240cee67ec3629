/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's waiting connections: accepted, their client not heard from
 * yet. The parent keeps them oldest first, each beside its poll slot, and
 * forks a session only for one that holds a byte (serve.c). Nothing here
 * reads from a client: a peek leaves every byte to the session.
 */
#ifndef DND_SERVE_WAIT_H
#define DND_SERVE_WAIT_H

#include <poll.h>
#include <stddef.h>

#define SERVE_WAIT_MAX		1024	/* at most; the oldest is closed to
					 * make room */

struct serve_waiting {
	int fd;
	double t0;		/* accepted at */
	char peer[96];
};

/*
 * How many may wait: SERVE_WAIT_MAX, as far as RLIMIT_NOFILE allows beside
 * the other fds the parent holds (a log pipe per child, some spare); the
 * soft limit is raised towards the hard one for that first. accept() then
 * never meets EMFILE, which would leave the listener readable for ever.
 */
unsigned int serve_wait_max(unsigned int fds);

/* Whether a readable connection holds a byte: 0, or -1 and the reason it
 * never will (closed, reset) in what. */
int serve_wait_peek(const struct serve_waiting *w, char *what, size_t len);

/* Takes entry i out of w[0..*n) and, when pfd is not NULL, its poll slot
 * out of pfd[0..*n) alike, keeping the order; returns the entry. */
struct serve_waiting serve_wait_take(struct serve_waiting *w,
				     struct pollfd *pfd, unsigned int *n,
				     unsigned int i);

#endif
