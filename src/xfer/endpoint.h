/* SPDX-License-Identifier: MIT */
/*
 * The file end of a transfer: opening a source or a sink and telling what it
 * is (regular file, /dev/zero, /dev/null, a stream), before any connection.
 */
#ifndef DND_ENDPOINT_H
#define DND_ENDPOINT_H

#include <sys/stat.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xfer/xfer.h"

struct endpoint {
	const char *file;	/* as named; "-" is stdin or stdout */
	int fd;			/* -1 until opened; a landed sink's is land's */
	bool own_fd;		/* closed by endpoint_close */
	enum dnd_ep ep;
	mode_t fmode;
	off_t start;		/* source: file offset of the first byte */
	uint64_t len;		/* source: payload length when known */
	bool known;		/* source: len is known (else: segments) */
	bool landing;		/* sink: a file written through land.c */
	struct stat st;		/* source: a regular file's, at open */
};

/*
 * Opens file as a source: a regular file from its current offset (up to
 * limit bytes when has_limit), /dev/zero (needs has_limit) or a stream.
 * Returns 0, or -errno with the reason and the fix in err (a usage error).
 */
int endpoint_source(struct endpoint *e, const char *file, bool has_limit,
		    uint64_t limit, char *err, size_t len);

/*
 * Classifies file as a sink: stdout ("-"), an existing device or FIFO
 * (opened now), or a regular file to be landed later (checked now with
 * land_check: overwrite is -o, truncate -t). 0, or -errno with err set.
 */
int endpoint_sink(struct endpoint *e, const char *file, bool overwrite,
		  bool truncate, char *err, size_t len);

/*
 * A regular source compared with its state at open (size, mtime and ctime
 * to the nanosecond): a write to it since then changes at least one, unless
 * it came within the same timestamp tick as the last change before open.
 * A change of its link count (unlinked, renamed over, hard-linked) changes
 * no byte: the ctime it moves is then not counted.
 * 0 when still (or not a regular file), 1 when changed with the fields
 * that differ in what ("mtime/ctime/size"), or -errno from fstat.
 */
int endpoint_changed(const struct endpoint *e, char *what, size_t len);

/* Closes the fd if the endpoint owns it. */
void endpoint_close(struct endpoint *e);

#endif
