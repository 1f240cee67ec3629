/* SPDX-License-Identifier: MIT */
/*
 * dnd bench --plot: each table drawn as the 2006 thread laid it out, a send x
 * recv grid coloured by MB/s, with the references and the machine stated above.
 */
#ifndef DND_BENCH_PLOT_H
#define DND_BENCH_PLOT_H

#include "bench/bench_types.h"

/*
 * Draws b (cells summarized, best marked, references measured) into path,
 * PNG or SVG by its suffix, with gnuplot; dir holds the data file and the
 * script. Blocks until gnuplot is done (at most 60 s). Returns 0, or 1 with
 * the reason printed on stderr. Anything gnuplot says on stderr while it
 * succeeds is passed on as "dnd: gnuplot: ..." lines.
 */
int bench_plot(const struct bench *b, const char *path, const char *dir);

#endif
