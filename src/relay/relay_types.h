/* SPDX-License-Identifier: MIT */
/*
 * The relay's types only [hap -t.h]: what the loops share (relay.c), a loop
 * (relay_loop.c), a flow and its lists (relay_flow.c, relay_accept.c), a
 * direction (relay_pump.c). Each of those files declares its functions in
 * its own header.
 */
#ifndef DND_RELAY_TYPES_H
#define DND_RELAY_TYPES_H

#include <sys/socket.h>
#include <sys/types.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pipe.h"
#include "core/stats.h"
#include "relay/evloop.h"
#include "relay/relay.h"

struct relay_bpf;

/* One direction: bytes read from fd[i] wait here until written to fd[!i]. */
struct relay_dir {
	struct dnd_pipe *pipe;	/* held only while it carries data */
	char *buf;		/* copy path */
	size_t off;		/* copy path: first unsent byte in buf */
	size_t count;		/* bytes inside the pipe or buf */
	bool rd_ready;		/* the source may have data */
	bool rdhup;		/* the source's peer has shut down writing */
	bool full;		/* stop reading until count drops */
	bool wr_blocked;	/* the destination returned EAGAIN */
	bool eof;		/* the source returned 0 */
	bool shut;		/* the destination got shutdown(SHUT_WR) */
};

struct relay_flow;

#define DND_RELAY_BUF_CACHE 64	/* empty copy buffers kept for reuse */

struct relay_list {
	struct relay_flow *head, *tail;	/* oldest first */
};

struct relay_flow {
	struct relay *r;
	int fd[2];		/* [0] client, [1] target */
	struct relay_dir dir[2];	/* dir[i] reads fd[i], writes fd[!i] */
	bool copy;		/* no pipe was left: copy from now on */
	int err[2];		/* -errno: fd[i] broke (read, write or SO_ERROR) */
	bool hup[2];		/* fd[i] hung up cleanly: out of epoll */
	uint64_t sent[2];	/* bytes dir[i] handed to the kernel */
	int outq;		/* flushing: SIOCOUTQ seen last; -1: none yet */
	/* -m sockmap: the kernel forwards; the relay watches (relay_sockmap.c) */
	bool paired;		/* both sockets are in the sockmap */
	uint32_t slot[2];	/* fd[i]'s place in the sockmap */
	uint64_t cookie[2];	/* fd[i]'s SO_COOKIE, its key in the peers map */
	uint64_t base[2];	/* fd[i]'s acked + unacked bytes at pairing */
	uint64_t seen;		/* progress last seen, for --idle-timeout */
	uint64_t live[2];	/* counts[slot[i]].fwd at the last live tick,
				 * inside r->live[i] */
	double last;		/* accept or connect start, then last progress */
	struct relay_flow *prev, *next;
	struct relay_list *list;
};

#define DND_RELAY_INBOX 256	/* clients one loop may hand another at once */

/*
 * Clients loop i accepted for loop j, in loop j (one producer, one
 * consumer): the producer fills fd[tail] then moves tail on (release), the
 * consumer reads fd[head] then moves head on, so neither waits on a lock.
 */
struct relay_inbox {
	atomic_uint head, tail;	/* free-running; the slot is % DND_RELAY_INBOX */
	int fd[DND_RELAY_INBOX];
};

/*
 * What the loops (--threads) share: set before any of them starts, or
 * atomic. Nothing else crosses from one loop to another.
 */
struct dnd_metrics;

struct relay_shared {
	const struct relay_opts *o;
	struct relay *loops;	/* [n]; loops[0] runs in relay_run's thread
				 * and reads the signals */
	unsigned int n;
	int lfd;		/* the listener every loop accepts from */
	int setsize;		/* fds each loop's table covers */
	unsigned int max_pipes;	/* in all: --max-pipes, or what fds allow */
	unsigned int pipe_size;	/* F_SETPIPE_SZ for new pipes */
	struct sockaddr_storage target;
	socklen_t target_len;
	char target_name[80];
	struct dnd_sample t0;
	atomic_bool drain;	/* SIGTERM or SIGINT, or a loop failed */
	atomic_uint running;	/* loops not yet out of their run */
	atomic_uint_fast64_t active, peak_active;	/* flows, all loops */
	atomic_bool told_connect;	/* the first target failure was logged */
	atomic_bool told_accept;
	atomic_bool told_error;		/* the first relay error was logged */
	atomic_bool told_pipe;		/* the first pipe() failure was logged */
	struct dnd_metrics *metrics;	/* --metrics, or NULL */
	enum relay_mode mode;	/* o->mode, with -m auto decided */
	struct relay_bpf *bpf;	/* -m sockmap: its program and maps */
};

/* One loop: its own epoll, flows, pipe pool, buffers and counters. */
struct relay {
	const struct relay_opts *o;
	struct relay_shared *sh;
	unsigned int id;	/* index in sh->loops */
	struct relay_stats *st;	/* &own (a test may point it elsewhere) */
	struct evloop el;
	struct pipe_pool pool;
	int lfd;		/* sh->lfd; -1 once this loop drains */
	unsigned int lmask;	/* the listener's interest when accepting */
	int sfd;		/* signalfd (loop 0), or -1 */
	int evfd;		/* eventfd other loops wake this one with; -1
				 * with one loop */
	unsigned int max_conn;	/* this loop's share of --max-conn */
	/* Flows it holds plus clients handed to it and not yet taken: what
	 * the other loops balance on. */
	atomic_uint load;
	struct relay_inbox *inbox;	/* [sh->n]: inbox[i] from loop i */
	bool paused;		/* the listener is out of epoll */
	double resume_at;	/* retry accept after EMFILE; 0: on a close */
	bool draining;		/* SIGTERM: no new flows */
	double grace_end;
	bool stop;
	size_t budget;
	struct relay_list waiting;	/* accepted, no fd left for the target */
	struct relay_list connecting, open;
	struct relay_list flushing;	/* broken: the last bytes go out first */
	struct relay_list handing;	/* -m sockmap: a side ended, its last
					 * bytes are still on their way */
	uint32_t *slots;	/* -m sockmap: free sockmap slots, a stack */
	unsigned int nslots;
	/* -m sockmap --metrics: bytes the program forwarded for flows still
	 * open, as of live_at - DND_RELAY_LIVE_TICK; published with st. */
	uint64_t live[2];
	double live_at;
	double retry_at;	/* when waiting flows try again */
	unsigned int nflows;
	/* A direction holds a copy buffer only while it carries data, as
	 * with pipes, so idle flows cost no 2 x --buffer each. */
	char *bufs[DND_RELAY_BUF_CACHE];
	unsigned int nbufs;
	struct relay_stats own;
	/* A copy of own for the loop that prints (SIGUSR1), taken at the end
	 * of each turn of this loop's run. */
	pthread_mutex_t pub_lock;
	struct relay_stats pub;
	pthread_t thread;
	int err;		/* how its run ended: 0 or -errno */
};

#endif
