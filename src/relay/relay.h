/* SPDX-License-Identifier: MIT */
/*
 * The TCP relay of HAProxy's 2009 splice thread: one epoll loop forwarding many
 * flows, each direction through a pooled pipe with non-blocking splice, or via
 * a buffer. Its options and its entry point; the counters are in relay_stats.h.
 */
#ifndef DND_RELAY_H
#define DND_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "relay/relay_stats.h"

#define DND_RELAY_PIPE_DEFAULT (~0u)

enum relay_mode {
	DND_RELAY_SPLICE = 0,	/* socket -> pipe -> socket */
	DND_RELAY_RW,		/* recv() into a buffer, send() out of it */
	DND_RELAY_SOCKMAP,	/* a BPF sk_skb program redirects in the kernel;
				 * no -m auto picks it: a stalled reader makes
				 * the kernel queue without bound (dnd-relay(1)) */
};

/* The name of a mode, as -m takes it. */
const char *relay_mode_name(enum relay_mode m);

struct relay_opts {
	const char *listen_host;	/* NULL: every address */
	uint16_t listen_port;
	const char *target_host;
	uint16_t target_port;
	int listen_fd;		/* >= 0: already listening (the bench); else -1 */
	enum relay_mode mode;
	unsigned int pipe_size;	/* F_SETPIPE_SZ; 0: the kernel's default;
				 * DND_RELAY_PIPE_DEFAULT: 1 MiB or less */
	unsigned int max_conn;	/* flows at once; the listener pauses at it */
	unsigned int max_pipes;	/* pipes alive; past it flows copy */
	unsigned int rcvlowat;	/* SO_RCVLOWAT on both sockets; 0: unset */
	unsigned int maxevents;	/* epoll_wait batch */
	unsigned int threads;	/* loops, a thread each, sharing the listener;
				 * 0 counts as 1 */
	size_t splice_max;	/* bytes asked per splice; 0: the pipe's size */
	size_t buf_size;	/* copy buffer per direction */
	size_t budget;		/* bytes one direction may move per wakeup */
	double idle_timeout;	/* seconds; 0: never */
	double connect_timeout;	/* seconds for the target's handshake */
	double grace;		/* seconds flows get to finish after SIGTERM */
	bool json;		/* stats as JSON lines */
	bool quiet;		/* no start-up notes on stderr (the bench) */
	bool metrics;		/* --metrics: serve /metrics at ... */
	const char *metrics_host;	/* ... this address (NULL: loopback) */
	uint16_t metrics_port;	/* ... and port */
	FILE *out;		/* where stats go (SIGUSR1 and the end) */
};

/* Fills o with the defaults of `dnd relay`. */
void relay_defaults(struct relay_opts *o);

/*
 * Runs the relay until SIGTERM or SIGINT (then: stop accepting, give flows
 * o->grace seconds, reset the rest), in o->threads loops that each take a
 * share of --max-conn and --max-pipes. SIGUSR1 prints stats (summed). Raises
 * RLIMIT_NOFILE to what max_conn and max_pipes need, as far as the hard
 * limit allows (fewer pipes then; too few for max_conn is an error), and
 * says what it got on stderr unless o->quiet. Blocks those signals
 * and reads them from a signalfd. Returns 0 with *st filled (also on
 * failure, as far as it got), or -errno after printing the cause:
 * -ENOPKG when -m sockmap cannot run here (privileges, kernel, verifier).
 */
int relay_run(const struct relay_opts *o, struct relay_stats *st);

#endif
