/* SPDX-License-Identifier: MIT */
/*
 * One run of one bench cell: a `dnd recv --json` and a `dnd send --json`
 * child, their reports parsed and checked; plus the scratch files and the
 * per-cell summary (medians, from stats_median()).
 */
#ifndef DND_BENCH_RUN_H
#define DND_BENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench_types.h"

/* Creates b->src_path with b->src_size random bytes, synced. 0 or -errno
 * with a message printed. */
int bench_make_source(struct bench *b);

/*
 * Decides whether c can run at all, from the methods' probe() and check()
 * against its source and sink. Sets c->state to BENCH_NA with the reason in
 * c->why when not; leaves it alone otherwise.
 */
void bench_cell_check(const struct bench *b, struct bench_cell *c);

/*
 * Runs c once into r. Returns 0, -EINTR when SIGINT/SIGTERM stopped it, or
 * another -errno with the reason in why (a child's error, a wrong verdict,
 * a deadline).
 */
int bench_cell_run(struct bench *b, const struct bench_cell *c,
		   struct bench_run *r, char *why, size_t len);

/* A TCP port that the receiver can bind now, for cells and iperf3. */
unsigned int bench_port(struct bench *b);

/* Seconds a run of size bytes may take before it is killed. */
double bench_deadline(const struct bench *b, uint64_t size);

/* Drops the page cache before a cold file-source run; records in b why it
 * could not (once). */
void bench_drop_caches(struct bench *b);

/* Fills c->sum from c->runs[0..nruns). */
void bench_summarize(struct bench_cell *c);

#endif
