/* SPDX-License-Identifier: MIT */
/*
 * What bench prints for people: the 2006 thread's tables (send methods as
 * rows, recv methods as columns), the reference rows and the ratios.
 */
#ifndef DND_BENCH_OUT_H
#define DND_BENCH_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "bench/bench_types.h"
/* cli/cmd_bench.c reaches the exporters through this header; drop this
 * include once it includes bench_export.h itself. */
#include "bench/bench_export.h"

/* Marks the fastest cell of each table row (c->best). */
void bench_mark_best(struct bench *b);

/* The text report: header, one table per group, references, ratios. */
void bench_print(FILE *f, const struct bench *b);

/* A table's title: "zero -> null | 32Mi per run | buffer 64Ki | pipe
 * kernel default", with "best path: " before it for that table. Returns
 * buf. */
const char *bench_group_title(const struct bench_group *g, char *buf,
			      size_t len);

/* Row r's name: the send method, with " -b SIZE" when the row's sender has
 * its own buffer. Returns buf, or the method's name. */
const char *bench_row_name(const struct bench_group *g, unsigned int r,
			   char *buf, size_t len);

/* The table's fastest ok cell, or NULL when none ran. */
const struct bench_cell *bench_group_best(const struct bench *b,
					  const struct bench_group *g);

/* Whether the cell shows a total MB/s (c->sum.total): it ran into a file,
 * where the receiver's total runs on past its headline to the verified
 * file's rename and directory fsync. A null sink's total ends at its
 * verdict, next to the headline, and is left out. */
bool bench_has_total(const struct bench *b, const struct bench_cell *c);

/* Cell throughput over a reference's (0 when there is none). */
double bench_ratio(const struct bench *b, const struct bench_cell *c,
		   const char *key);

#endif
