/* SPDX-License-Identifier: MIT */
/* The relay's counters, and how they are printed: text lines or JSON. */
#ifndef DND_RELAY_STATS_H
#define DND_RELAY_STATS_H

#include <stdint.h>
#include <stdio.h>

struct relay_opts;

#define DND_RELAY_MAX_THREADS 64	/* --threads */

/*
 * With --threads, each loop counts its own and relay_stats_add() sums them;
 * active and peak_active are counted across the loops as they happen, and
 * pipes_peak is the sum of each loop's peak.
 */
struct relay_stats {
	int mode;		/* enum relay_mode in force (-m auto decided) */
	uint64_t threads;	/* loops these counters are summed over */
	uint64_t accepted;	/* client connections taken */
	uint64_t accepted_by[DND_RELAY_MAX_THREADS];	/* by each loop */
	uint64_t active;	/* flows open now (connecting included) */
	uint64_t peak_active;
	uint64_t failed;	/* target refused, unreachable or timed out */
	uint64_t completed;	/* both directions ended with a FIN */
	uint64_t resets;	/* closed because one side broke (after what it
				 * had sent was delivered to the other) */
	uint64_t errors;	/* closed because the relay itself failed (no
				 * memory, an fd it cannot use): both sides
				 * get a reset, undelivered bytes discarded */
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
	uint64_t pipes_failed;	/* pipe() failed (EMFILE, ENFILE, ENOMEM) */
	uint64_t pipes_max;	/* the cap in force (--max-pipes, or fewer
				 * when RLIMIT_NOFILE cannot cover them) */
	uint64_t pipes_alive;	/* open now, in use or pooled: kernel memory
				 * of up to pipe_size each */
	uint64_t wakeups, events, epoll_ctl;
	double seconds;		/* wall time of the loop */
	double cpu_user, cpu_sys;	/* the relay process */
};

/*
 * Prints st to f as text lines, or with o->json as one JSON object on one
 * line (json_begin_doc type "relay_stats"), then flushes f.
 */
void relay_stats_print(const struct relay_opts *o,
		       const struct relay_stats *st, FILE *f);

/*
 * Adds one loop's counters in src to dst: sums, but the smallest pipe size
 * seen; threads, accepted_by, active, peak_active, seconds and CPU are
 * left alone (they are the process', not a loop's).
 */
void relay_stats_add(struct relay_stats *dst, const struct relay_stats *src);

/* Mean bytes per splice into a pipe (the figure of merit of HAProxy's 2009 netdev thread); 0: none. */
double relay_bytes_per_splice(const struct relay_stats *st);

#endif
