/* SPDX-License-Identifier: MIT */
/*
 * One transfer end to end: opening the source or sink, the connection, the
 * protocol around the payload, verification, landing and the report.
 * cmd_xfer.c fills the options; bench runs sessions as child processes.
 */
#ifndef DND_SESSION_H
#define DND_SESSION_H

#include <stdbool.h>
#include <stdint.h>

struct dnd_method;

struct session_opts {
	bool sender;
	const char *host;	/* sender: where to connect */
	const char *bind;	/* receiver: address to listen on, NULL = all */
	const char *file;	/* source or sink; "-" is stdin/stdout */
	const struct dnd_method *m;
	uint16_t port;
	bool has_limit;
	uint64_t limit;		/* -l */
	uint64_t bsz;		/* -b */
	uint64_t window;	/* -w; 0 = leave the socket buffers alone */
	unsigned int pipe_size;	/* --pipe-size; 0 = kernel default */
	unsigned int splice_flags;
	unsigned int qd;	/* --qd; 0 = the method's default */
	uint64_t sync_every;	/* --sync stream: writeback step; 0 = end */
	bool overwrite;		/* -o */
	bool truncate;		/* -t */
	bool raw;		/* --raw: no framing, no verification */
	bool verify;		/* false with --no-verify */
	bool json;
	double timeout;		/* seconds without progress; 0 = none */
	double connect_timeout;	/* sender: retry refused connects this long */
	unsigned int streams;	/* sender, -P: TCP connections (1..64) */
	double interval;	/* -i: seconds between interval lines; 0 */
	bool json_stream;	/* --json-stream: intervals and report as
				 * JSON Lines on stdout */
	bool resume;		/* receiver, --resume: keep a failed try's
				 * prefix, and resume from a kept one */
	bool direct;		/* --direct: O_DIRECT file I/O (-m rw) */
};

/*
 * Checks what needs the file system and the method (source or sink kind
 * against the method, an existing target, a stream without a visible end),
 * then runs the transfer and prints the report. Returns the exit code:
 * 0 success, 1 transfer failure (cause printed), 2 usage (printed).
 */
int session_run(const struct session_opts *o);

#endif
