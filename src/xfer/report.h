/* SPDX-License-Identifier: MIT */
/* The numbers every transfer prints: the 2006 program's line, then the cost. */
#ifndef DND_REPORT_H
#define DND_REPORT_H

#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/stats.h"

struct xfer_interval;

/* One MPTCP subflow of a stream, as the report shows it. */
struct dnd_subflow {
	unsigned int stream;
	char local[64], remote[64];	/* "addr:port"; "?": not known */
	uint64_t sent;			/* its tcpi_bytes_acked */
	uint64_t received;		/* its tcpi_bytes_received */
};

struct dnd_result {
	bool sender;
	bool dnd2006_line;	/* the 2006 form: its first line as it was */
	const char *method;
	const char *file;
	char peer[96];
	uint64_t bytes;
	uint64_t length;	/* UINT64_MAX when unknown */
	bool timed;		/* cost is valid */
	struct dnd_cost cost;
	struct dnd_syscalls sc;
	struct dnd_zc zc;	/* shown when zc.set */
	uint64_t bsz, eff_bsz;
	char capped[200];	/* dnd serve: why bsz is less than the
				 * client's -b, asked_bsz; or "" */
	uint64_t asked_bsz;
	unsigned int pipe_size, pipe_got;	/* 0: method has no pipe */
	bool uses_pipe;
	uint64_t window;	/* -w; 0: left to the kernel */
	const char *window_from;	/* "default", "-w", "2006-form" */
	uint64_t rate;		/* --rate asked, bytes/s; 0: unpaced */
	char congestion[24];	/* what stream 0 ran (read back); "" */
	bool congestion_asked;	/* -C chose it */
	int sndbuf, rcvbuf;	/* as the kernel gave them */
	bool have_tcp;
	struct tcp_info tcp;
	const char *verdict;	/* "verified", "counted", "unchecked" */
	const char *verify_kind;	/* receiver: "as-received" (the bytes
					 * hashed as they arrived), "readback"
					 * (the landed file read back); NULL */
	unsigned int verify_ranges;	/* as received, -P N: the N ranges
					 * each checked against the sender's
					 * (the file's hash is the sender's);
					 * 0: the whole file's hash */
	bool hash_valid;
	uint64_t hash;
	bool raw;
	char detail[160];
	char sync[96];		/* receiver: how the landed file was synced */
	uint64_t resumed_from;	/* bytes kept from an earlier try */
	bool sparse;		/* holes described, not sent */
	uint64_t holes;		/* of bytes, those holes */
	uint32_t extents;	/* the file's data extents */
	double total_seconds;	/* the time a user waits, from the first
				 * byte to total_end; 0 when it did not
				 * get there (no confirmation came) */
	const char *total_end;	/* "receiver's confirmation", "rename and
				 * directory fsync", "verdict"... */
	unsigned int nstreams;	/* > 1: st[] holds each stream's share */
	struct {
		uint64_t offset, bytes;
		double seconds;
		uint32_t retrans;
	} st[64];
	struct {		/* stream 0's TLS session; on: keyed */
		bool on;
		char version[16], cipher[64], group[32];	/* "": none */
		const char *auth;	/* tls_auth() */
		bool ktls_tx, ktls_rx;
		char ktls_why[160];	/* when either is false */
	} tls;
	struct {		/* --mptcp (on): each stream's subflows */
		bool on;
		unsigned int fallback;	/* streams the peer made plain TCP */
		unsigned int total;	/* subflows of all the streams */
		unsigned int nsub;	/* of those, in sub[] */
		struct dnd_subflow sub[16];
	} mptcp;
	char warning[320];	/* a problem that did not fail the transfer */
	char error[320];	/* empty on success */
	/* dnd serve's client: the server's report of the same transfer, as
	 * it sent it (checked: a JSON object of printable ASCII, and lines
	 * of printable ASCII); NULL when none came. */
	char *peer_json;
	char *peer_text;
	/* --json with -i: the intervals kept for the report's "intervals"
	 * (report_interval_keep); intervals_on: -i was given. */
	bool intervals_on;
	struct xfer_interval *iv;
	size_t niv, iv_cap, iv_lost;
};

/* Writes the human report: its first line is the figure the user waited
 * for, labelled "sender" or "receiver" (the sender's: to the receiver's
 * confirmation, with the 2006 program's timing beside it); with
 * r->dnd2006_line, the 2006 program's line as it was. */
void report_text(FILE *f, const struct dnd_result *r);

/* Writes one JSON object (valid also on failure, with "error"). */
void report_json(FILE *f, const struct dnd_result *r);

struct json;

/* The "tls" member: an object when r->tls.on, else null. */
void report_json_tls(struct json *j, const struct dnd_result *r);

struct xfer_interval;

/* One -i line, as text or as a JSON Line ("type": "interval"), on the
 * FILE * given as arg; flushed, so a pipeline sees it at once. Shaped as
 * the driver's on_interval callback. */
void report_interval_text(const struct xfer_interval *iv, void *arg);
void report_interval_json(const struct xfer_interval *iv, void *arg);
/* --json with -i: keeps the interval in the struct dnd_result * given as
 * arg, for report_json's "intervals" array (stdout stays one document).
 * Free with report_free(). */
void report_interval_keep(const struct xfer_interval *iv, void *arg);
void report_free(struct dnd_result *r);

#endif
