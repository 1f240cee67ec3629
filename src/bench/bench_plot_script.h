/* SPDX-License-Identifier: MIT */
/* The gnuplot script that draws the laid-out chart (bench_plot_script.c). */
#ifndef DND_BENCH_PLOT_SCRIPT_H
#define DND_BENCH_PLOT_SCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/bench_plot_types.h"

/* Writes s as a gnuplot string literal (quoted, escaped). */
void plot_gp_str(FILE *f, const char *s);

/* How many lines s has ("a\nb": 2). */
int plot_lines(const char *s);

/*
 * Writes to path the gnuplot script that draws pl from the data file data
 * into out (svg: the SVG terminal, else PNG). 0 or -errno.
 */
int plot_script(const struct plot *pl, const char *path, const char *data,
		const char *out, bool svg);

#endif
