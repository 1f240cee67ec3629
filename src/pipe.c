// SPDX-License-Identifier: MIT
/*
 * Pipe pairs for splice. A default pipe holds 16 pages (seed 004's limit);
 * seed 003 asks for bigger ones with F_SETPIPE_SZ, which we report as given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "pipe.h"

int pipe_open(struct dnd_pipe *p, unsigned int want)
{
	int fds[2];
	int r;

	p->rd = p->wr = -1;
	p->size = 0;
	if (pipe2(fds, O_CLOEXEC) == -1)
		return -errno;
	p->rd = fds[0];
	p->wr = fds[1];
	if (want && fcntl(p->wr, F_SETPIPE_SZ, (int)want) == -1)
		goto fail;
	r = fcntl(p->wr, F_GETPIPE_SZ);
	if (r == -1)
		goto fail;
	p->size = (unsigned int)r;
	return 0;
fail:
	r = -errno;
	pipe_close(p);
	return r;
}

void pipe_close(struct dnd_pipe *p)
{
	if (p->rd != -1)
		close(p->rd);
	if (p->wr != -1)
		close(p->wr);
	p->rd = p->wr = -1;
}

unsigned int pipe_max_size(void)
{
	unsigned int v = 0;
	FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");

	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}
