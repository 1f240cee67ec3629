/* SPDX-License-Identifier: MIT */
/*
 * dnd serve: a lasting receiver (and, for pulls, sender) of files beneath
 * one directory. The parent accepts, holds each connection until its
 * client has proven the key (keyless: sent its first byte), then forks a
 * child for it; the child reads the request under a deadline, then runs one
 * transfer
 * (session.c's dialogues on the same socket), and hands the parent its
 * log line. A child that crashes or is killed never stops the server.
 */
#ifndef DND_SERVE_H
#define DND_SERVE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/opt_parse.h"
#include "serve/cidr.h"
#include "serve/confine.h"
#include "serve/litter.h"
#include "serve/key.h"

#define SERVE_PENDING_MAX	128	/* children without a session slot
					 * at once; the oldest of the
					 * heaviest address is killed to
					 * make room */
#define SERVE_METHODS_MAX	16	/* names in --methods */

struct dnd_method;

struct serve_opts {
	const char *dir;
	const char *bind;	/* NULL: every address (keyless, cmd_serve
				 * gives 127.0.0.1) */
	uint16_t port;
	struct dnd_keyfiles keys;	/* none: keyless, loopback only */
	bool has_allow;
	struct cidr_list allow;
	unsigned int max_sessions;
	unsigned int max_pending_src;	/* --max-pending-per-source */
	uint64_t max_bytes;	/* 0: no limit */
	uint64_t max_buffer;	/* a session's -b at most (budget.h) */
	uint64_t max_memory;	/* all sessions' buffers at most */
	bool replace;
	/* --methods: the only ones a client may ask of the server's end */
	const struct dnd_method *methods[SERVE_METHODS_MAX];
	unsigned int nmethods;	/* 0: any */
	bool json;
	const char *log;	/* --log FILE; NULL: stderr (stdout with json) */
	unsigned int log_burst;	/* --log-burst: failure lines a source a
				 * window; 0: every one */
	double grace;		/* seconds sessions get after SIGTERM */
	uint64_t window;	/* the sessions' socket buffers */
	const char *window_from;	/* "-w" or "default" (0: autotuning) */
	uint64_t rate;		/* --rate: a pull's pacing, bytes/s; 0 */
	const char *congestion;	/* -C: every stream's; NULL: the kernel's */
	bool mptcp;		/* --mptcp: listen and run sessions with
				 * IPPROTO_MPTCP */
	double timeout;		/* the sessions' --timeout */
	struct opt_addr metrics;	/* --metrics; port 0 and no host: off */
	bool has_metrics;
};

/* The longest log line a session child writes: a name of PATH_MAX bytes
 * that are not UTF-8 takes 6 bytes a byte escaped, 2 more in hex. */
#define SERVE_LOG_MAX	(PATH_MAX * 8 + 4096)

/* What a session child tells the parent before its log line, for the
 * counters of --metrics. */
struct serve_tally {
	uint64_t bytes;
	uint8_t ok;		/* landed or sent and verified/counted */
	uint8_t pull;		/* the server sent */
	uint8_t ran;		/* got as far as a transfer */
	uint8_t pad[5];
};

/* Runs the server until SIGINT or SIGTERM. Returns the exit code: 0 after
 * a graceful stop, 1 when it cannot serve (cause printed), 2 for a bad
 * DIR or key file. */
int serve_run(const struct serve_opts *o);

/* What a session child needs from the parent (serve_child.c). */
struct serve_ctx {
	const struct serve_opts *o;
	struct dnd_confine dir;
	struct dnd_key *key;		/* when o->keys.key */
	struct dnd_tls_cfg tls;		/* the key and certificates */
	bool keyed;			/* TLS on every connection */
	pid_t *slots;			/* shared: o->max_sessions pids */
	uint64_t *mem;			/* shared: each slot's memory
					 * (budget_claim) */
	struct serve_litter *litter;	/* shared: each slot's temporary */
};

/* The child's whole life on connection fd from peer: handshake (from the
 * request on when fd already carries TLS: the parent ran the opening),
 * checks, verdict, transfer; its log line is written to logfd. Never returns. */
void serve_child(const struct serve_ctx *c, int fd, const char *peer,
		 int logfd) __attribute__((noreturn));

#endif
