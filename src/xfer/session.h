/* SPDX-License-Identifier: MIT */
/*
 * One transfer end to end: opening the source or sink, the connection, the
 * protocol around the payload, verification, landing and the report.
 * cmd_xfer.c fills the options; bench runs sessions as child processes.
 */
#ifndef DND_SESSION_H
#define DND_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/socket.h>

struct dnd_method;
struct dnd_result;
struct dnd_tls_cfg;

/*
 * A transfer with dnd serve on one end (NULL in session_opts: one-shot).
 * Stream 0 is a connection on which the serve handshake already ran (with
 * a key, TLS is on it); after the reply the server sends its own report
 * to the client.
 */
struct session_link {
	bool server;		/* this end is dnd serve's session */
	int sock;		/* server: stream 0, connected */
	int lfd;		/* server, N > 1 streams: the session's own
				 * listener for streams 1..N-1, or -1; the
				 * session closes it */
	uint16_t port;		/* client: where streams 1..N-1 connect (the
				 * server's streams message, set by open()) */
	/* server: whether --allow lets a peer in on lfd too; NULL: all */
	bool (*allowed)(const struct session_link *l,
			const struct sockaddr *sa, socklen_t sl);
	/* client: connects and shakes hands once the file end is open (the
	 * push's length is then known); returns the socket or -errno with
	 * err set, and sets auth. */
	int (*open)(struct session_link *l, bool known, uint64_t len,
		    char *peer, size_t plen, char *err, size_t elen);
	/* server: told of a push's temporary file once it is open, so that
	 * a killed session's file can be found and removed; or NULL */
	void (*landing)(struct session_link *l, int fd, const char *tmp);
	void *arg;		/* open()'s, landing()'s, allowed()'s */
	uint64_t max_bytes;	/* server: refuse a longer push; 0: any */
	/* server, a push: the length its request declared (known), which
	 * the sender's header must repeat exactly: the checks of free space
	 * and --max-bytes were made against it, and it is reserved */
	bool known;
	uint64_t length;
	/* server: why its buffer is less than the client's -b (asked_bsz),
	 * for its report; NULL: as asked */
	const char *capped;
	uint64_t asked_bsz;
	const char *label;	/* the name in messages and the report */
	struct dnd_result *res;	/* server: a copy of the result, if set */
};

/* How a verifying receiver hashes what landed (--verify). */
enum {
	DND_VERIFY_RECEIVED = 0,	/* the bytes as they arrive, where they
					 * pass through memory; else read back */
	DND_VERIFY_READBACK,		/* the landed file, read back after */
};

struct session_opts {
	bool sender;
	const char *host;	/* sender: where to connect */
	const char *bind;	/* receiver: address to listen on, NULL = all */
	const char *file;	/* source or sink; "-" is stdin/stdout */
	const struct dnd_method *m;
	uint16_t port;
	bool has_limit;
	uint64_t limit;		/* -l */
	double seconds;		/* --time: send /dev/zero this long; 0 */
	uint64_t bsz;		/* -b */
	uint64_t window;	/* -w; 0 = leave the socket buffers alone */
	const char *window_from;	/* why that window: "default", "-w",
					 * "2006-form" (the report says) */
	uint64_t rate;		/* --rate: bytes/s the sender paces all its
				 * streams to, split evenly; 0: unpaced */
	const char *congestion;	/* -C: TCP_CONGESTION on every stream;
				 * NULL: the kernel's default */
	unsigned int pipe_size;	/* --pipe-size; 0 = kernel default */
	unsigned int splice_flags;
	unsigned int qd;	/* --qd; 0 = the method's default */
	uint64_t sync_every;	/* --sync stream: writeback step; 0 = end */
	bool overwrite;		/* -o */
	bool truncate;		/* -t */
	bool raw;		/* --raw: no framing, no verification */
	bool verify;		/* false with --no-verify */
	bool sparse;		/* sender: holes not sent; false with
				 * --no-sparse */
	unsigned int verify_how;	/* receiver, --verify: DND_VERIFY_* */
	bool json;
	bool dnd2006_line;	/* the 2006 form: its report line as it was */
	bool verbose;		/* -v: the report's lines after a failure too */
	bool quiet;		/* -q: no progress line on a terminal */
	double timeout;		/* seconds without progress; 0 = none */
	double connect_timeout;	/* sender: retry refused connects this long */
	unsigned int streams;	/* sender, -P: TCP connections (1..64) */
	double interval;	/* -i: seconds between interval lines; 0 */
	bool json_stream;	/* --json-stream: intervals and report as
				 * JSON Lines on stdout */
	bool resume;		/* receiver, --resume: keep a failed try's
				 * prefix, and resume from a kept one */
	bool direct;		/* --direct: O_DIRECT file I/O (-m rw) */
	bool mptcp;		/* --mptcp: IPPROTO_MPTCP on every stream */
	struct session_link *link;	/* dnd serve on one end; or NULL */
	const struct dnd_tls_cfg *tls;	/* --key, --cert: TLS on every
					 * stream; NULL: plain */
};

/*
 * Checks what needs the file system and the method (source or sink kind
 * against the method, an existing target, a stream without a visible end),
 * then runs the transfer and prints the report. Returns the exit code:
 * 0 success, 1 transfer failure (cause printed), 2 usage (printed).
 */
int session_run(const struct session_opts *o);

#endif
