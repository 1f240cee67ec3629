/* SPDX-License-Identifier: MIT */
/*
 * What the two io_uring methods share (uring.c, uring_splice.c): the ring,
 * its slots, submitting and reaping, finish and teardown. Internal to them.
 */
#ifndef DND_URING_RING_H
#define DND_URING_RING_H

#ifdef DND_HAVE_LIBURING
#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pipe.h"

struct dnd_xfer;

#define URING_QD_DEFAULT	4
#define URING_WAIT_MS_DEFAULT	60000	/* bound on a wait with --timeout 0 */
#define URING_REG_MAX		(1UL << 30)	/* largest registered buffer */

enum uring_op {
	URING_FILL = 1,		/* read the source, or recv the socket */
	URING_DRAIN,		/* send to the socket, or write the sink */
	URING_SPLICE_IN,	/* into the pipe */
	URING_SPLICE_OUT,	/* out of the pipe */
	URING_CANCEL,
};

enum uring_state {
	URING_FREE = 0,
	URING_FILLING,
	URING_FULL,
	URING_DRAINING,
	URING_NOTIF,		/* sent; SEND_ZC notifications still due */
};

struct uring_slot {
	char *buf;		/* registered buffer slot index */
	uint64_t off;		/* file offset of buf[0] at the file end */
	size_t want;		/* bytes the fill asked for */
	size_t len;		/* bytes in the buffer */
	size_t done;		/* bytes of it drained */
	bool hashed;		/* sender: passed to xfer_hash_inline (a short
				 * drain queues it again) */
	enum uring_state state;
	unsigned int notifs;	/* SEND_ZC notifications still due */
	unsigned int reqs;	/* SEND_ZC requests that will notify */
	unsigned int copied;	/* notifications flagged ZC_COPIED */
};

struct uring_priv {
	struct io_uring ring;
	bool ring_ok;
	bool one_buf;		/* the ring is one registered buffer */
	/* Handles one completion: the variant's own (uring, uring-splice). */
	int (*on_cqe)(struct dnd_xfer *x, const struct io_uring_cqe *cqe);
	bool zc;		/* SEND_ZC rather than SEND */
	bool sent_any;
	bool eof;
	char *mem;
	size_t memlen;
	size_t len;		/* bytes per buffer, or per splice */
	unsigned int nslot;
	unsigned int max_fills;
	unsigned int fills;	/* fills in flight */
	bool draining;		/* the one socket or sink request in flight */
	unsigned int due;	/* CQEs still to come, notifications included */
	uint64_t fill_seq, drain_seq;	/* slot numbers, modulo nslot */
	uint64_t issued;	/* bytes asked of the source, less shortfalls */
	uint64_t returned;	/* bytes handed back to the core */
	uint64_t off;		/* next file offset at the file end */
	uint64_t out_off;	/* uring-splice: sink offset */
	int wait_ms;
	struct dnd_pipe pipe;	/* uring-splice */
	size_t in_pipe;		/* bytes spliced in, not yet out */
	size_t in_want;
	bool in_flight;
	struct uring_slot slot[];
};

#define URING_UD(op, i) ((uint64_t)(op) << 32 | (uint32_t)(i))

/* 0 when the kernel has every opcode in ops, else -ENOSYS naming them. */
int uring_probe_ops(char *why, size_t len, const int *ops,
		    const char *const *names, unsigned int n);

/* A request's SQE, tagged with op and slot i; the ring always has room. */
struct io_uring_sqe *uring_sqe(struct dnd_xfer *x, enum uring_op op,
			       unsigned int i);

/* Maps a failed request to the first error, with its operation named. */
int uring_failed(struct dnd_xfer *x, int res, const char *op);

/*
 * Submits what is queued and waits, bounded, for at least one completion
 * (one io_uring_enter), then hands every ready completion to p->on_cqe.
 * 0 or -errno with x's error set.
 */
int uring_step(struct dnd_xfer *x);

/* Allocates x->priv with nslot slots and the ring; both variants' setup
 * starts here. 0 or -errno. */
int uring_setup_ring(struct dnd_xfer *x, unsigned int nslot);

/* The finish and teardown hooks of both methods. */
int uring_finish(struct dnd_xfer *x);
void uring_teardown(struct dnd_xfer *x);

#endif /* DND_HAVE_LIBURING */
#endif
