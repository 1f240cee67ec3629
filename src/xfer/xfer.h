/* SPDX-License-Identifier: MIT */
/*
 * The transfer context and the core loop that drives a method: it owns
 * looping, end of data, short sources, signals, progress and timing; a method
 * only moves at most `len` bytes per call.
 */
#ifndef DND_XFER_H
#define DND_XFER_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

#include "core/stats.h"

struct dnd_method;

/* What sits at the file end of a transfer. */
enum dnd_ep {
	DND_EP_FILE = 0,	/* regular file: seekable, mappable, re-readable */
	DND_EP_ZERO,		/* /dev/zero as a source */
	DND_EP_NULL,		/* /dev/null as a sink */
	DND_EP_STREAM,		/* pipe, FIFO, socket, tty: read or written once */
};

struct dnd_xfer {
	const struct dnd_method *m;
	bool sender;
	int sock;		/* connected TCP socket, blocking */
	int fd;			/* source (sender) or sink (receiver) */
	enum dnd_ep ep;
	mode_t fmode;		/* st_mode of fd */
	off_t pos;		/* file offset of the next payload byte */
	uint64_t done;		/* payload bytes moved so far */

	size_t bsz;		/* -b as asked */
	size_t eff_bsz;		/* as the method uses it (page rounding) */
	unsigned int pipe_size;	/* --pipe-size as asked; 0 = kernel default */
	unsigned int pipe_got;	/* what F_GETPIPE_SZ said, for pipe methods */
	unsigned int splice_flags;
	unsigned int qd;	/* --qd: uring queue depth, zerocopy ring
				 * buffers; 0 = the method's default */
	bool progress;		/* draw a progress line on stderr */
	uint64_t sync_every;	/* receiver, --sync stream: start writeback
				 * every this many bytes; 0: end only */
	off_t synced;		/* writeback started up to here */
	uint64_t length;	/* payload length when known, else UINT64_MAX */

	/* Non-NULL when the source cannot be read twice: methods that pass
	 * data through user memory hash it as it goes (xfer_hash_inline). */
	XXH3_state_t *hash;

	void *priv;		/* method state; freed by teardown */
	/* Set by setup when put lands data fastest from the method's own
	 * memory (io_uring's registered buffers): callers of put fill it. */
	void *putbuf;
	size_t putbuf_len;
	struct dnd_syscalls sc;
	struct dnd_zc zc;	/* zero-copy outcome, for methods that know it */
	char detail[160];	/* method's own note for the report */

	/* The first failure, kept with its context (later ones are ignored). */
	int err;
	char err_op[64];
	const char *err_where;
	int err_line;

	double progress_next;
	double t0;
};

/* Initializes x for one direction; fds are owned by the caller. */
void xfer_init(struct dnd_xfer *x, const struct dnd_method *m, bool sender,
	       int sock, int fd);

/* Records the first failure; returns err (negative errno) for chaining. */
#define xfer_fail(x, err, op) xfer_fail_at((x), (err), (op), __FILE__, __LINE__)
int xfer_fail_at(struct dnd_xfer *x, int err, const char *op, const char *file,
		 int line);

/* Hashes bytes that passed through user memory, if x->hash is set. */
void xfer_hash_inline(struct dnd_xfer *x, const void *buf, size_t n);

/*
 * Moves the payload. With known=true exactly `len` bytes are moved (a source
 * that ends early is a failure); with known=false the source is a stream of
 * unknown length and is sent as segments (proto.h) until it ends.
 * Returns 0, or -errno with x->err and x->err_op set.
 */
int xfer_send_payload(struct dnd_xfer *x, uint64_t len, bool known);

/* Receives the payload: exactly len bytes (known), or segments (!known). */
int xfer_recv_payload(struct dnd_xfer *x, uint64_t len, bool known);

/* Moves until the source ends or the peer closes (--raw, no framing). */
int xfer_move_until_eof(struct dnd_xfer *x);

#endif
