/* SPDX-License-Identifier: MIT */
/*
 * The kit the live checks of `dnd probe` are built from (probe_live.c,
 * probe_relay.c, probe.c): the result setter, a loopback TCP connection,
 * bounded waits, non-blocking pipes, a temporary file, a byte pattern.
 * Every wait is bounded by about DND_PROBE_WAIT_MS; nothing here blocks.
 */
#ifndef DND_PROBE_CHECK_H
#define DND_PROBE_CHECK_H

#include <sys/types.h>
#include <fcntl.h>		/* SPLICE_F_* */
#include <stdbool.h>
#include <stddef.h>

#include "core/pipe.h"
#include "probe/probe.h"

#define DND_PROBE_WAIT_MS 1000	/* bound on each wait of a live check */
/* The 2009 thread's segments came off Ethernet; loopback's 64 KiB MSS would turn
 * "many segments queued" into two or three. */
#define DND_PROBE_MSS 1448
#define DND_PROBE_RCVBUF (2 << 20)	/* room to queue hundreds of segments */
#define DND_PROBE_BIGPIPE (1 << 20)
#define DND_PROBE_SPLICE (SPLICE_F_NONBLOCK | SPLICE_F_MOVE)

/* A loopback TCP connection: cli sends, srv receives; -1 when closed. */
struct probe_conn {
	int lfd, cli, srv;
};

/* Sets r->err = err and r->why from fmt; returns err. */
int probe_res(struct probe_result *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* CLOCK_MONOTONIC in milliseconds. */
long long probe_now_ms(void);

/* Fills p with n bytes of the pattern, starting at stream offset off. */
void probe_pattern_fill(unsigned char *p, size_t n, size_t off);

/*
 * Opens c: a connected 127.0.0.1 pair, both ends non-blocking. mss > 0 sets
 * TCP_MAXSEG on both ends before the handshake; rcvbuf > 0 sets SO_RCVBUF
 * before listen() so the window scale covers it. Returns 0, or r->err
 * (the connection's -errno, or -ETIMEDOUT) with c closed.
 */
int probe_conn_open(struct probe_conn *c, int mss, int rcvbuf,
		    struct probe_result *r);

/* Closes what c holds; idempotent. */
void probe_conn_close(struct probe_conn *c);

/*
 * Sends n more bytes of pattern on c->cli as far as the window lets them
 * go, then waits until c->srv has them all queued or the queue stops
 * growing for 50 ms. Returns the bytes queued at c->srv, or -errno.
 */
long long probe_conn_queue(struct probe_conn *c, size_t n);

/* Reads and drops what socket fd holds now. */
void probe_sock_discard(int fd);

/* Discards at c->srv until both of c's queues are empty (bounded). */
void probe_conn_drain(struct probe_conn *c);

/* The connection's full segment size (TCP_INFO, both ends), or 0. */
long long probe_conn_mss(const struct probe_conn *c);

/*
 * Waits up to ms for ev on fd, or, when ep != -1, for the epoll set ep.
 * Returns 1 ready, 0 timed out, or -errno.
 */
int probe_wait_fd(int fd, short ev, int ep, int ms);

/*
 * Opens *p non-blocking with want bytes (0: the default), or the default
 * when the kernel refuses that much; p->size says what it got. Returns 0
 * or r->err.
 */
int probe_pipe_nb(struct dnd_pipe *p, unsigned int want,
		  struct probe_result *r);

/* Reads and drops what p holds now. */
void probe_pipe_empty(const struct dnd_pipe *p);

/*
 * An unnamed read-write file in $TMPDIR or /tmp (O_TMPFILE, else a file
 * unlinked at once), gone when closed. Returns the fd, or r->err.
 */
int probe_tmp_file(struct probe_result *r);

/*
 * n bytes of pattern went into fd by the path how ("splice(pipe -> file)"):
 * reads them back (from offset 0 when file, else a bounded read of a pipe
 * or socket) and sets r: 0 when intact, else -EIO or the read's -errno.
 * Returns r->err.
 */
int probe_read_back(struct probe_result *r, int fd, bool file, ssize_t n,
		    const char *how);

#endif
