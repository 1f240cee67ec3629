/* SPDX-License-Identifier: MIT */
/*
 * What bench writes for programs: JSON Lines, CSV and a gnuplot chart, from
 * a finished run (cells summarized, references measured).
 */
#ifndef DND_BENCH_EXPORT_H
#define DND_BENCH_EXPORT_H

#include <stdio.h>

#include "bench/bench_types.h"

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

#endif
