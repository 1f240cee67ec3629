/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's log, written by the parent only: where it goes (stderr, or
 * stdout with --json, or --log FILE), RFC 3339 times on text lines, and a
 * bound on the lines about refused or failed connections: per source
 * address, SERVE_LOG_BURST lines in SERVE_LOG_WINDOW seconds, then one
 * line that counts what was not shown. A failure is a connection refused
 * or failed before a transfer ran: a session that ran always has its line.
 */
#ifndef DND_SERVE_LOG_H
#define DND_SERVE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SERVE_LOG_BURST		10	/* failure lines a source a window,
					 * unless --log-burst */
#define SERVE_LOG_WINDOW	10.0	/* seconds */
#define SERVE_LOG_SOURCES	32	/* sources counted one by one; more
					 * are counted together */

struct serve_log_src {
	char addr[64];		/* without the port */
	double t0;		/* the window's start; 0: free */
	unsigned long shown, hidden;
};

struct serve_log {
	FILE *out;		/* the session lines */
	bool json;
	unsigned int burst;	/* failure lines a source a window; 0: all */
	struct serve_log_src src[SERVE_LOG_SOURCES + 1];	/* last: the
								 * others */
};

/* Opens the log (path NULL: stdout with json, else stderr) and points
 * log_err() at it (with json at stderr), with times on text lines. 0, or
 * -errno with why. */
int serve_log_open(struct serve_log *g, const char *path, bool json,
		   unsigned int burst, char *why, size_t len);

/* A connection that ended with no transfer: its line, by the parent;
 * tried: its opening (preambles, TLS) ran here and failed, a line that
 * reads as a session child's would. */
void serve_log_failed(struct serve_log *g, const char *peer, double secs,
		      const char *what, bool tried);

/* A session child's line of n bytes (text, or one JSON object; '\n' at
 * the end); failed: refused or failed before its transfer, a line the
 * bound may leave out (and count). */
void serve_log_child(struct serve_log *g, const char *peer, bool failed,
		     const char *line, size_t n);

/* Writes the count of each window that ended by now (all with all). */
void serve_log_tick(struct serve_log *g, double now, bool all);

/* serve_log_tick(all), then closes a --log FILE. */
void serve_log_close(struct serve_log *g);

#endif
