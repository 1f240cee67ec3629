/* SPDX-License-Identifier: MIT */
/*
 * What bench writes for programs: JSON Lines and CSV, from a finished run
 * (cells summarized, references measured). The chart is bench_plot.h's.
 */
#ifndef DND_BENCH_EXPORT_H
#define DND_BENCH_EXPORT_H

#include <stdio.h>

#include "bench/bench_types.h"
/* cli/cmd_bench.c calls bench_plot() through this header (via bench_out.h);
 * drop this include once it includes bench_plot.h itself. */
#include "bench/bench_plot.h"

/* One JSON object per cell, then one per reference (JSON Lines). */
void bench_write_json(FILE *f, const struct bench *b);

/* A header line, then one row per cell and per reference; every row has
 * the same columns. */
void bench_write_csv(FILE *f, const struct bench *b);

#endif
