/* SPDX-License-Identifier: MIT */
/*
 * What bench prints for people: the seed-style tables (send methods as
 * rows, recv methods as columns), the reference rows and the ratios.
 */
#ifndef DND_BENCH_OUT_H
#define DND_BENCH_OUT_H

#include <stdio.h>

#include "bench/bench_types.h"
/* cli/cmd_bench.c reaches the exporters through this header; drop this
 * include once it includes bench_export.h itself. */
#include "bench/bench_export.h"

/* Marks the fastest cell of each table row (c->best). */
void bench_mark_best(struct bench *b);

/* The text report: header, one table per group, references, ratios. */
void bench_print(FILE *f, const struct bench *b);

/* Cell throughput over a reference's (0 when there is none). */
double bench_ratio(const struct bench *b, const struct bench_cell *c,
		   const char *key);

#endif
