/* SPDX-License-Identifier: MIT */
/* Pipes for the splice paths, with the size the kernel actually gave. */
#ifndef DND_PIPE_H
#define DND_PIPE_H

#include <stdbool.h>

struct dnd_pipe {
	int rd, wr;		/* -1 when closed */
	unsigned int size;	/* F_GETPIPE_SZ after any resize */
};

/*
 * Opens a pipe (O_CLOEXEC). want > 0 asks F_SETPIPE_SZ for at least want
 * bytes; the kernel rounds up to a power-of-two number of pages and refuses
 * more than /proc/sys/fs/pipe-max-size without CAP_SYS_RESOURCE (EPERM).
 * Returns 0 with p->size set, or -errno with p closed.
 */
int pipe_open(struct dnd_pipe *p, unsigned int want);

/* Closes both ends; safe on a closed or zeroed-then-failed pipe. */
void pipe_close(struct dnd_pipe *p);

/* /proc/sys/fs/pipe-max-size, or 0 when it cannot be read. */
unsigned int pipe_max_size(void);

#endif
