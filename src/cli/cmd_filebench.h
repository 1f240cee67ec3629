/* SPDX-License-Identifier: MIT */
/* `dnd filebench`: every way dnd can put data into a file, timed like fio. */
#ifndef DND_CMD_FILEBENCH_H
#define DND_CMD_FILEBENCH_H

/* Returns the exit code: 0 every path ran (or was reported unavailable),
 * 1 a path failed or wrote wrong content, 2 usage. */
int cmd_filebench(int argc, char **argv);

#endif
