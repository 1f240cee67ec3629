/* SPDX-License-Identifier: MIT */
/*
 * The TCP relay of seed 004: one epoll loop forwarding many flows, each
 * direction through a pooled pipe with non-blocking splice, or via a buffer.
 */
#ifndef DND_RELAY_H
#define DND_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DND_RELAY_PIPE_DEFAULT (~0u)

enum relay_mode {
	DND_RELAY_SPLICE = 0,	/* socket -> pipe -> socket */
	DND_RELAY_RW,		/* recv() into a buffer, send() out of it */
};

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
	size_t splice_max;	/* bytes asked per splice; 0: the pipe's size */
	size_t buf_size;	/* copy buffer per direction */
	size_t budget;		/* bytes one direction may move per wakeup */
	double idle_timeout;	/* seconds; 0: never */
	double connect_timeout;	/* seconds for the target's handshake */
	double grace;		/* seconds flows get to finish after SIGTERM */
	bool json;		/* stats as JSON lines */
	FILE *out;		/* where stats go (SIGUSR1 and the end) */
};

struct relay_stats {
	uint64_t accepted;	/* client connections taken */
	uint64_t active;	/* flows open now (connecting included) */
	uint64_t peak_active;
	uint64_t failed;	/* target refused, unreachable or timed out */
	uint64_t completed;	/* both directions ended with a FIN */
	uint64_t resets;	/* closed because one side broke (after what it
				 * had sent was delivered to the other) */
	uint64_t idle_closed;	/* closed by --idle-timeout */
	uint64_t grace_closed;	/* still open when the grace period ended */
	uint64_t accept_errors;	/* out of fds or memory: accept or socket */
	uint64_t listener_pauses;	/* max-conn or fd exhaustion */
	uint64_t bytes[2];	/* [0] client->target, [1] target->client,
				 * delivered: what a reset threw away is not */
	uint64_t bytes_discarded;	/* in a pipe or send queue at a reset */
	uint64_t urgent_copies;	/* recv+send past an urgent mark (splice stops) */
	/* Calls that moved bytes; EAGAIN is counted in eagain_* below. */
	uint64_t splice_in_calls, splice_in_bytes;
	uint64_t splice_out_calls, splice_out_bytes;
	uint64_t read_calls, read_bytes;	/* copy path */
	uint64_t write_calls, write_bytes;
	uint64_t eagain_pipe_full;	/* splice in: EAGAIN, the socket not empty */
	uint64_t eagain_empty;	/* reading an empty socket */
	uint64_t eagain_out;	/* the destination's send queue was full */
	uint64_t fallbacks;	/* flows that copied because no pipe was left */
	uint64_t pipes_created, pipes_peak, pipe_size_min;
	uint64_t pipes_small;	/* got the kernel's default size: EPERM */
	uint64_t wakeups, events, epoll_ctl;
	double seconds;		/* wall time of the loop */
	double cpu_user, cpu_sys;	/* the relay process */
};

/* Fills o with the defaults of `dnd relay`. */
void relay_defaults(struct relay_opts *o);

/*
 * Runs the relay until SIGTERM or SIGINT (then: stop accepting, give flows
 * o->grace seconds, reset the rest). SIGUSR1 prints stats. Raises
 * RLIMIT_NOFILE to what max_conn and max_pipes need. Blocks those signals
 * and reads them from a signalfd. Returns 0 with *st filled (also on
 * failure, as far as it got), or -errno after printing the cause.
 */
int relay_run(const struct relay_opts *o, struct relay_stats *st);

/* Prints st as text lines, or as one JSON line with o->json. */
void relay_stats_print(const struct relay_opts *o,
		       const struct relay_stats *st, FILE *f);

/* Mean bytes per splice into a pipe (seed 004's figure of merit); 0: none. */
double relay_bytes_per_splice(const struct relay_stats *st);

#endif
