/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's waiting connections: accepted, their client not proven yet.
 * The parent keeps them oldest first, each beside its poll slot, and forks
 * a session only for one that is through: keyed, once the preambles and
 * the TLS handshake (hello.h, driven here one non-blocking step a poll)
 * have proven the client holds the key; keyless, where there is no proof,
 * once it holds a byte (a peek leaves every byte to the session).
 */
#ifndef DND_SERVE_WAIT_H
#define DND_SERVE_WAIT_H

#include <sys/socket.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hello.h"

#define SERVE_WAIT_MAX		1024	/* at most; the oldest of the
					 * heaviest source is closed to make
					 * room */

struct serve_waiting {
	int fd;			/* non-blocking while it waits */
	double t0;		/* accepted at */
	double linger;		/* failed: drained until then; 0: not */
	short events;		/* what its poll waits for */
	bool ready;		/* through: to fork */
	uint8_t src[16];	/* its address, IPv4 mapped into IPv6 */
	struct hello_acceptor hs;	/* keyed: the opening so far */
	char peer[96];
};

/*
 * How many may wait: SERVE_WAIT_MAX, as far as RLIMIT_NOFILE allows beside
 * the other fds the parent holds (a log pipe per child, some spare); the
 * soft limit is raised towards the hard one for that first. accept() then
 * never meets EMFILE, which would leave the listener readable for ever.
 */
unsigned int serve_wait_max(unsigned int fds);

/* A new waiting connection fd from sa (keyed: tls, else NULL). */
void serve_wait_init(struct serve_waiting *w, int fd,
		     const struct sockaddr *sa, socklen_t sl,
		     const struct dnd_tls_cfg *tls, double now);

/* What a poll (revents re) made of a waiting connection. */
enum serve_wait_st {
	SERVE_WAIT_ON,		/* still waiting (or lingering) */
	SERVE_WAIT_READY,	/* through: w->ready is set */
	SERVE_WAIT_DROP,	/* closed before its handshake: what says why */
	SERVE_WAIT_FAILED,	/* its handshake failed: what says why; it
				 * lingers a second if we answered it */
	SERVE_WAIT_GONE,	/* done lingering: closed, nothing to say */
};
enum serve_wait_st serve_wait_poll(struct serve_waiting *w, short re,
				   double now, char *what, size_t len);

/* Closes w and frees its opening's TLS. */
void serve_wait_close(struct serve_waiting *w);

/* Takes entry i out of w[0..*n) and, when pfd is not NULL, its poll slot
 * out of pfd[0..*n) alike, keeping the order; returns the entry. */
struct serve_waiting serve_wait_take(struct serve_waiting *w,
				     struct pollfd *pfd, unsigned int *n,
				     unsigned int i);

/* One pending handshake, for serve_wait_heaviest(). */
struct serve_src {
	uint8_t a[16];
	double t0;
	unsigned int i;		/* the caller's index */
};

/* Of n > 0 pending handshakes, the index (.i) of the oldest from the
 * address that has the most; s is reordered. */
unsigned int serve_wait_heaviest(struct serve_src *s, unsigned int n);

#endif
