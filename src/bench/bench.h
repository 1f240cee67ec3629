/* SPDX-License-Identifier: MIT */
/* `dnd bench` from settled options to the printed tables. */
#ifndef DND_BENCH_H
#define DND_BENCH_H

#include "bench/bench_types.h"

/*
 * Sets up the path, plans the cells, runs them (each run a sender and a
 * receiver process with a deadline) beside the references, writes the
 * outputs o names and removes what it made. Stops early on SIGINT/SIGTERM.
 * Returns the exit code: 0 every cell ran, 1 a cell or an output failed,
 * 2 setup, 128+N stopped by signal N.
 */
int bench_main(const struct bench_opts *o);

#endif
