/* SPDX-License-Identifier: MIT */
/*
 * The state of one transfer end, shared by session.c (ends, driver, report)
 * and its two dialogues, session_send.c and session_recv.c. Not for other
 * modules: they call session_run().
 */
#ifndef DND_SESSION_TYPES_H
#define DND_SESSION_TYPES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/hash.h"
#include "core/land.h"
#include "core/proto.h"
#include "xfer/endpoint.h"
#include "xfer/report.h"
#include "xfer/session.h"
#include "xfer/xfer.h"

/* A file's hash computed in a thread while something else waits: the
 * receiver's re-read of what landed, beside its fdatasync. */
struct session_hash_job {
	pthread_t tid;
	bool running;		/* tid is to be joined */
	int fd;
	bool direct;		/* through O_DIRECT (--direct) */
	off_t off;
	uint64_t len, hash;
	int err;		/* hash_fd's result */
	atomic_bool stop;	/* the result is no longer wanted */
};

/* Receiver: the answer the sender waits for, which must carry our reason
 * if we fail now. */
enum session_owed {
	SESSION_OWE_NONE = 0,
	SESSION_OWE_ACCEPT,	/* a header came; no accept yet */
	SESSION_OWE_REPLY,	/* accepted; no reply yet */
};

struct session {
	const struct session_opts *o;
	struct endpoint end;	/* the file end */
	struct xfer_cfg cfg;
	struct xfer t;		/* the driver's transfer */
	struct dnd_result res;
	struct dnd_land land;
	XXH3_state_t *hash;	/* the payload hashed as it passes (the sender;
				 * a receiver verifying as received) */
	/* N > 1 streams: each range's hash (the sender's, sent after the
	 * trailer), and a receiver verifying as received: each stream's
	 * state, fed in that stream's thread */
	uint64_t range_hash[DND_STREAMS_MAX + 1];	/* and their bind */
	XXH3_state_t *range_st[DND_STREAMS_MAX];
	bool peer_verifies;	/* sender: the accept said DND_AF_VERIFY */
	bool ack_now;		/* receiver: the plan said DND_PF_ACKNOW */
	/* Sparse (the header offered, the accept took, the plan said): the
	 * whole file's data extents, offsets from the payload's byte 0;
	 * the holes between are not sent (proto.h). */
	bool sparse_ok;		/* sender: offers; receiver: takes */
	bool sparse;
	struct dnd_extent *ext;
	uint32_t n_ext;
	enum session_owed owe;	/* receiver */
	int lfd;		/* receiver: listening, until every stream came */
	unsigned int n;		/* streams */
	int sock[DND_STREAMS_MAX];	/* stream i's connection; [0] talks */
	int fd[DND_STREAMS_MAX];	/* stream i's own file description */
	struct dnd_join join[DND_STREAMS_MAX];	/* stream i's range */
	uint64_t xfer_id;
	uint64_t ident;		/* receiver: the source's, from the header */
	uint64_t start;		/* the payload is [start, length) */
	double t_begin;		/* just before the payload: total's start */
	FILE *out;		/* where the report goes */
	struct session_hash_job hjob;
};

/* Records the failure message (first one wins), prints it, and returns
 * code: 1 for a failed transfer, 2 for a request that cannot be run. */
int session_exit(struct session *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define session_fail(s, ...) session_exit((s), 1, __VA_ARGS__)
#define session_usage(s, ...) session_exit((s), 2, __VA_ARGS__)

/* The file end's name in messages: dnd serve's name for it, or the path. */
const char *session_name(const struct session *s);
/* Streams' file descriptions and ranges are set (s->join, s->fd, s->sock):
 * sets up the driver. 0 or 1. */
int session_setup_method(struct session *s);
/* The payload, timed by the driver, and the start of the total (s->t_begin).
 * 0 or 1 (the cause named). */
int session_payload(struct session *s);
/* The total ends now, at end ("receiver's confirmation"...). */
void session_total(struct session *s, const char *end);
/* A stop request that came after the payload: nothing may land. 0 or 1. */
int session_stopped(struct session *s);
/* Sender, when the receiver closed the connection under it: whether the
 * receiver's reply came first, saying why it failed (then 1, with that
 * reason as the failure); waits at most a second for it. 0 or 1. */
int session_send_heard(struct session *s);
/* Turns a failed proto_recv_* into a message; returns 1. */
int session_recv_failed(struct session *s, int r, const char *what,
			double secs);
/* Names a failed proto_send_*; 0 when r is 0, else 1. */
int session_sent(struct session *s, int r, const char *what);
/* Starts hashing len bytes of fd from off in a thread (s->hjob), through
 * O_DIRECT if direct; without a thread the hash is left for later. */
void session_hash_start(struct session *s, int fd, off_t off, uint64_t len,
			bool direct);
/* Waits for that thread, if one runs. */
void session_hash_join(struct session *s);
/* Stops that thread, if one runs, and waits for it: nothing will read it. */
void session_hash_cancel(struct session *s);
/* The hash of len bytes of fd from off: the thread's when it hashed just
 * that, else computed now. 0 or -errno. */
int session_hash_get(struct session *s, int fd, off_t off, uint64_t len,
		     bool direct, uint64_t *hash);
/* How long to wait for a peer hashing n bytes first: --timeout plus the
 * bytes at a slow 50 MB/s (a cold disk re-read); 0 without --timeout. */
double session_hash_wait(const struct session *s, uint64_t n);
/* Both hashes present and equal: verified; either missing: counted. */
void session_verdict(struct session *s, const struct dnd_end *mine,
		     const struct dnd_end *theirs);
/* --raw: no framing, nothing verified. */
void session_unchecked(struct session *s);
/* Splits [s->start, length) over s->n streams into s->join. */
void session_split(struct session *s, uint64_t length);
/* Gives stream i a file description of its own at its range (i > 0
 * reopens the file end). 0 or 1. */
int session_stream_fd(struct session *s, unsigned int i);

/* The two dialogues (session_send.c, session_recv.c). 0, 1 or 2. */
int session_send(struct session *s);
int session_recv(struct session *s);
/* --resume after a failure: keeps the landed prefix for the next try.
 * 0 when kept; else nonzero, and the caller aborts the landing. */
int session_keep(struct session *s);

#endif
