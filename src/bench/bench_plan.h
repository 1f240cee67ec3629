/* SPDX-License-Identifier: MIT */
/* The plan of a bench run: tables, cells, and the cells that cannot run. */
#ifndef DND_BENCH_PLAN_H
#define DND_BENCH_PLAN_H

#include <stdint.h>

#include "bench/bench_types.h"

/* Bytes per run into sink k: --size, else 1 GiB into /dev/null and 256 MiB
 * into a file (32 MiB and 8 MiB with --quick). */
uint64_t bench_size_for(const struct bench_opts *o, enum bench_sink k);

/*
 * Builds b->groups and b->cells from b->o: the plain tables, the best-path
 * tables, every cell checked against the methods (n/a with the reason),
 * repeated pairs of a pipe sweep and pairs outside the default set marked.
 * Sets b->src_size. Returns 0 or -ENOMEM.
 */
int bench_plan(struct bench *b);

/* Numbers the footnotes of each table; cells with one reason share one. */
void bench_number_notes(struct bench *b);

#endif
