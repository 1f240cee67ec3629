/* SPDX-License-Identifier: MIT */
/*
 * dnd filebench: every way dnd puts data into a file (each a method's file
 * half, run through the driver's xfer_land), timed like fio with the end
 * fsync counted, then read back and checked.
 */
#ifndef DND_FILEBENCH_H
#define DND_FILEBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fb_opts {
	uint64_t bs, size;
	unsigned int repeat;
	bool rewrite, json, csv, verify, keep;
	const char *dir;
	char only[256];		/* --paths list, "" = all */
};

/* Lists the paths, one "  name  what it does" line each. */
void filebench_list(FILE *f);

/* Whether name (len bytes, not NUL-terminated) is a path's name. */
bool filebench_known(const char *name, size_t len);

/* The bytes the selected paths hold on disk at the most: one file at a
 * time, or one per path with --keep. */
uint64_t filebench_need(const struct fb_opts *o);

/*
 * Runs every path o selects, o->repeat times each, into files under o->dir,
 * printing the table (or JSON/CSV lines) on stdout. Returns 0, or 1 when a
 * run failed or a stop signal came (the cause printed).
 */
int filebench_run(const struct fb_opts *o);

#endif
