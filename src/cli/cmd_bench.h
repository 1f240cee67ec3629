/* SPDX-License-Identifier: MIT */
/* `dnd bench`: the 2006 program's results table, measured on this machine. */
#ifndef DND_CMD_BENCH_H
#define DND_CMD_BENCH_H

/* Runs the benchmark; returns the exit code (0 all cells ran, 1 a cell or
 * an output failed, 2 usage, 128+N stopped by signal N). */
int cmd_bench(int argc, char **argv);

#endif
