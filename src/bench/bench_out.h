/* SPDX-License-Identifier: MIT */
/*
 * What bench prints: the seed-style tables (send methods as rows, recv
 * methods as columns), the reference rows and ratios, JSON Lines, CSV and a
 * gnuplot chart.
 */
#ifndef DND_BENCH_OUT_H
#define DND_BENCH_OUT_H

#include <stdio.h>

#include "bench/bench_types.h"

/* Marks the fastest cell of each table row (c->best). */
void bench_mark_best(struct bench *b);

/* The text report: header, one table per group, references, ratios. */
void bench_print(FILE *f, const struct bench *b);

/* One JSON object per cell, then one per reference (JSON Lines). */
void bench_write_json(FILE *f, const struct bench *b);

/* A header line, then one row per cell and per reference; every row has
 * the same columns. */
void bench_write_csv(FILE *f, const struct bench *b);

/*
 * Draws throughput as grouped bars over CPU us/MB into path (.png or .svg)
 * with gnuplot, using dir for its data and script. Returns 0, or 1 with the
 * reason printed.
 */
int bench_plot(const struct bench *b, const char *path, const char *dir);

/* Cell throughput over a reference's (0 when there is none). */
double bench_ratio(const struct bench *b, const struct bench_cell *c,
		   const char *key);

#endif
