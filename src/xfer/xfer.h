/* SPDX-License-Identifier: MIT */
/*
 * The transfer driver: the only caller of a method's hooks. A transfer is
 * one or more streams (a connection each, and the file range it carries)
 * run through one method; the driver owns looping, the ends of the data,
 * stop requests, progress and the timed window. Sessions, filebench and
 * bench go through this API; methods see only their stream.
 */
#ifndef DND_XFER_H
#define DND_XFER_H

#include <sys/types.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hash.h"
#include "core/proto.h"
#include "core/stats.h"

struct dnd_method;

/* What sits at the file end of a transfer. */
enum dnd_ep {
	DND_EP_FILE = 0,	/* regular file: seekable, mappable, re-readable */
	DND_EP_ZERO,		/* /dev/zero as a source */
	DND_EP_NULL,		/* /dev/null as a sink */
	DND_EP_STREAM,		/* pipe, FIFO, socket, tty: read or written once */
};

/* Settings of one transfer, read-only for its streams and hooks (in). */
struct xfer_cfg {
	const struct dnd_method *m;
	bool sender;
	enum dnd_ep ep;		/* the file end's kind */
	mode_t fmode;		/* st_mode of the file end */
	size_t bsz;		/* -b as asked */
	unsigned int pipe_size;	/* --pipe-size as asked; 0 = kernel default */
	unsigned int splice_flags;
	unsigned int qd;	/* --qd: uring queue depth, zerocopy ring
				 * buffers; 0 = the method's default */
	uint64_t sync_every;	/* receiver, --sync stream: start writeback
				 * every this many bytes; 0: end only */
	bool progress;		/* draw a progress line on stderr */
	double seconds;		/* sender, --time: segments of an endless
				 * source for this long from the first byte;
				 * 0: as the source gives them */
	bool hash_stream;	/* sender: a stream source that must be hashed
				 * as it passes (it cannot be read twice) */
	bool direct;		/* --direct: the file through O_DIRECT (rw) */
	const char *path;	/* the file end's name, for checks before any
				 * connection; NULL: none (serve, bench) */
};

/* What a stream's method reports (out). */
struct xfer_out {
	size_t eff_bsz;		/* buffer as the method uses it (rounding) */
	unsigned int pipe_got;	/* what F_GETPIPE_SZ said, for pipe methods */
	struct dnd_syscalls sc;
	struct dnd_zc zc;	/* zero-copy outcome, for methods that know it */
	char detail[160];	/* the method's own note for the report */
	uint64_t held;		/* bytes a failing hook had taken in but not
				 * passed on (a partly filled buffer) */
};

/* How a stream's payload is framed on the wire (core/proto.h). */
enum xfer_frame {
	XFER_LENGTH = 0,	/* exactly len bytes; an early end fails */
	XFER_SEGMENTS,		/* a source of unknown length, as segments */
	XFER_UNTIL_EOF,		/* --raw: until the source ends or peer closes */
};

struct xfer;

/* One stream: what a method's hooks see and may change. */
struct dnd_xfer {
	const struct xfer_cfg *cfg;
	int sock;		/* connected TCP socket, blocking */
	int fd;			/* source (sender) or sink (receiver) */
	off_t pos;		/* file offset of the next payload byte */
	uint64_t done;		/* payload bytes this stream moved, holes
				 * included */
	uint64_t holes;		/* of those, holes skipped (not sent) */
	/* Non-NULL when the payload is hashed as it passes (a source that
	 * cannot be read twice, a file sent in order, a receiver verifying
	 * as received): methods that pass data through user memory hash it
	 * there (xfer_hash_inline). */
	XXH3_state_t *hash;
	void *priv;		/* method state; freed by teardown */
	struct xfer_out out;

	/* The first failure, kept with its context (later ones are ignored). */
	int err;
	char err_op[64];
	const char *err_where;
	int err_line;

	/* The driver's own. */
	struct xfer *t;
	enum xfer_frame frame;
	uint64_t len;		/* XFER_LENGTH: bytes to move */
	off_t synced;		/* --sync stream: writeback started up to here */
	bool set_up;		/* setup ran and succeeded: teardown is due */
	bool last;		/* this stream's range ends the file */
	double t_begin, t_end;	/* when this stream started and ended */
};

/* One interval of a running transfer (-i), all streams together. */
struct xfer_interval {
	double start, end;	/* seconds since the payload began */
	uint64_t bytes;		/* moved in the interval */
	double cpu_user, cpu_sys;	/* process CPU seconds in it */
	uint32_t retrans;	/* TCP retransmits in it, all streams */
	uint32_t rtt_us;	/* smoothed RTT now, mean of the streams */
	bool last;		/* the closing, possibly shorter, interval */
};

/* A transfer: n streams of one method, and what the driver measured. */
struct xfer {
	struct xfer_cfg cfg;
	unsigned int n;
	struct dnd_xfer *st;	/* n streams */
	uint64_t length;	/* whole payload when known, else UINT64_MAX */
	/* Sparse: the data extents (file offsets, in order); each stream's
	 * range moves only their bytes, the holes between are skipped
	 * (hashed as zeros; a receiver rewriting in place punches them). */
	bool sparse;
	const struct dnd_extent *ext;
	uint32_t n_ext;
	off_t ext_base;		/* the file offset of the extents' 0 */
	bool punch;
	_Atomic uint64_t moved;	/* bytes moved by all streams (progress) */
	atomic_int first_bad;	/* the stream that failed first, or -1 */
	struct dnd_cost cost;	/* the timed window of xfer_run */
	bool timed;		/* cost is filled in */
	double progress_next, t0;
	/* -i: every interval seconds on_interval(iv, interval_arg) is called
	 * from the watching thread; 0: none. */
	double interval;
	void (*on_interval)(const struct xfer_interval *iv, void *arg);
	void *interval_arg;
	/* A receiver of a file: called once every stream has finished, just
	 * before the final fdatasync, so that work can overlap the sync (the
	 * session's re-read for verification); NULL: none. */
	void (*before_sync)(struct xfer *t, void *arg);
	void *before_sync_arg;
};

/* Most streams a transfer can have. */
#define DND_XFER_MAX_STREAMS	64

/*
 * Whether method c->m can serve this end (direction, c->ep, c->fmode), then
 * whether this kernel and process can use it. Returns 0; -EINVAL with the
 * fix in why (a request that cannot work: usage); or another -errno with the
 * kernel's reason in why (not usable here).
 */
int xfer_check(const struct xfer_cfg *c, char *why, size_t len);

/*
 * Prepares t for n streams (1..DND_XFER_MAX_STREAMS) with settings c, every
 * stream without ends (sock and fd -1). 0, or -ENOMEM/-EINVAL. Pair with
 * xfer_close().
 */
int xfer_open(struct xfer *t, const struct xfer_cfg *c, unsigned int n);

/*
 * Gives stream i its ends (owned by the caller), its first file offset and
 * what it carries (len counts for XFER_LENGTH only). The last stream is
 * taken to end the file (x->last); set it otherwise when ranges are not in
 * stream order.
 */
void xfer_stream(struct xfer *t, unsigned int i, int sock, int fd, off_t pos,
		 enum xfer_frame frame, uint64_t len);

/*
 * Where the data of all streams ends in the file: the furthest end of
 * their ranges, or -1 when a stream's length is unknown (not
 * XFER_LENGTH). For setup hooks: streams' positions move once xfer_run
 * starts.
 */
off_t xfer_end(const struct xfer *t);

/*
 * Before the ends are open (a receiver listening, before its accept lets
 * the sender's clock run): maps and touches the buffer memory one stream's
 * setup will ask for (io_buffers_ready), where the method says which.
 * xfer_setup() takes it; xfer_unready() unmaps what it did not take.
 */
void xfer_ready(const struct xfer_cfg *c);
void xfer_unready(void);

/* Runs the method's setup on every stream. 0, or the first -errno with that
 * stream's err set (xfer_failed). */
int xfer_setup(struct xfer *t);

/*
 * The timed window: moves every stream's payload (in threads when n > 1 or
 * intervals are asked for; a failing stream stops the others by shutting
 * their sockets), then the
 * method's finish, then for a receiver into a file fdatasync. Fills t->cost
 * (all streams' bytes). A stop signal (io_stop_signal) ends it with -EINTR.
 * Returns 0 or the first failure's -errno (xfer_failed says which stream).
 */
int xfer_run(struct xfer *t);

/* Runs teardown where setup ran and frees the streams; the ends stay open.
 * Safe on a t that xfer_open never reached (zeroed). */
void xfer_close(struct xfer *t);

/* The stream that failed first (the others may fail after it, cut by the
 * driver), or NULL. */
const struct dnd_xfer *xfer_failed(const struct xfer *t);

/* Payload bytes moved by all streams, holes included (the file's bytes
 * done); xfer_holes() those that were holes, not sent. */
uint64_t xfer_done(const struct xfer *t);
uint64_t xfer_holes(const struct xfer *t);

/* Every stream's syscall counts and zero-copy outcome added up, and the
 * first stream's buffer, pipe and note. */
void xfer_totals(const struct xfer *t, struct xfer_out *o);

/*
 * Filebench's path: lands size bytes in x's file from x->pos the way the
 * method's file half (put hook) does, one buffer of x->cfg->bsz bytes per
 * call. buf holds bsz bytes of content; stamp(buf, n, i, arg) may change
 * it before piece i (NULL: same bytes each time). When the method lands
 * fastest from its own memory (io_uring's registered buffers) buf is copied
 * there once and stamped there. Runs finish at the end; times nothing.
 * Returns 0 or -errno with x->err set; -EOPNOTSUPP when the method has no
 * file half. x must come from xfer_open + xfer_stream + xfer_setup.
 */
int xfer_land(struct dnd_xfer *x, uint64_t size, unsigned char *buf,
	      void (*stamp)(unsigned char *buf, size_t n, uint64_t i,
			    void *arg), void *arg);

/* Records the first failure; returns err (negative errno) for chaining. */
#define xfer_fail(x, err, op) xfer_fail_at((x), (err), (op), __FILE__, __LINE__)
int xfer_fail_at(struct dnd_xfer *x, int err, const char *op, const char *file,
		 int line);

/* Hashes bytes that passed through user memory, if x->hash is set. */
void xfer_hash_inline(struct dnd_xfer *x, const void *buf, size_t n);

#endif
