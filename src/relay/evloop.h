/* SPDX-License-Identifier: MIT */
/*
 * A small level-triggered epoll loop in the shape of Redis' ae: a table
 * indexed by fd holding a read callback, a write callback and a data pointer.
 */
#ifndef DND_EVLOOP_H
#define DND_EVLOOP_H

#include <signal.h>
#include <stdint.h>

#define DND_EV_READ 0x1u	/* interest and fired: readable */
#define DND_EV_WRITE 0x2u	/* interest and fired: writable */
#define DND_EV_RDHUP 0x4u	/* fired: the peer shut down its write side;
				 * as interest without DND_EV_READ: that (and
				 * errors) only, for a socket whose bytes the
				 * kernel forwards (-m sockmap) */
#define DND_EV_ERR 0x8u		/* fired: EPOLLERR or EPOLLHUP; as the whole
				 * interest: registered with no events, so
				 * only errors and hangups are reported */
#define DND_EV_EXCL 0x10u	/* with DND_EV_READ: EPOLLEXCLUSIVE, for a
				 * listener that several loops share (one
				 * waiting loop is woken, not all); its mask
				 * may only go to 0 and back, never change */

struct evloop;

/*
 * Called with the bits that fired. The bits are hints: the fd may have been
 * closed and reused by an earlier callback in the same batch, so a callback
 * must tolerate EAGAIN on a "ready" fd.
 */
typedef void (*evloop_fn)(struct evloop *el, int fd, void *data,
			  unsigned int fired);

struct evloop_file {
	unsigned int mask;	/* DND_EV_READ|DND_EV_WRITE, or DND_EV_ERR;
				 * 0: not in epoll */
	evloop_fn rfn, wfn;
	void *data;
};

struct evloop_fired {
	int fd;
	unsigned int mask;
};

struct evloop {
	int epfd;
	int setsize;		/* files[] covers fds 0 .. setsize - 1 */
	int maxevents;		/* epoll_wait batch */
	struct evloop_file *files;
	struct evloop_fired *fired;
	void *api;		/* struct epoll_event[maxevents] */
	double now;		/* CLOCK_MONOTONIC after the last wait */
	uint64_t wakeups;	/* epoll_wait calls that returned events */
	uint64_t events;	/* events they returned */
	uint64_t ctl_calls;	/* epoll_ctl calls */
};

/*
 * Sets up a loop for fds below setsize with a batch of maxevents. Returns 0
 * or -errno; on failure el needs no evloop_free() (it is safe anyway).
 */
int evloop_init(struct evloop *el, int setsize, int maxevents);

/* Closes the epoll fd and frees the tables; idempotent. */
void evloop_free(struct evloop *el);

/*
 * Sets the interest of fd to exactly mask, with callbacks and data (NULL
 * callbacks keep the ones already there). mask DND_EV_ERR keeps fd in epoll
 * with no events: EPOLLERR and EPOLLHUP still fire and go to the read
 * callback, which must then act on them (or a hangup spins the loop). mask 0
 * takes fd out of epoll; DND_EV_EXCL alone is 0. Calls epoll_ctl only when
 * the mask changes. Returns 0 or -errno (-ERANGE: fd >= setsize).
 */
int evloop_set(struct evloop *el, int fd, unsigned int mask, evloop_fn rfn,
	       evloop_fn wfn, void *data);

/* Forgets fd entirely (call before close()). */
void evloop_del(struct evloop *el, int fd);

/* The interest of fd (0 when unknown). */
unsigned int evloop_mask(const struct evloop *el, int fd);

/*
 * Waits up to timeout_ms (-1: forever) and runs the callbacks of what fired.
 * Returns the number of events, 0 on timeout, or -errno (EINTR is 0).
 */
int evloop_poll(struct evloop *el, int timeout_ms);

/*
 * Signals as events: blocks SIGTERM, SIGINT and SIGUSR1 (the mask before
 * goes to *old, for sigprocmask(SIG_SETMASK, old, NULL) at the end; *old is
 * untouched when blocking fails), ignores SIGPIPE (a send to a reset peer
 * returns EPIPE instead), and registers a non-blocking signalfd for the
 * three with fn as its read callback. Returns the signalfd, which the
 * caller closes, or -errno.
 */
int evloop_signalfd(struct evloop *el, sigset_t *old, evloop_fn fn,
		    void *data);

/* The next signal pending on signalfd fd, or 0 when none is. Never blocks. */
int evloop_signal_next(int fd);

#endif
