// SPDX-License-Identifier: MIT
/*
 * Pipe pairs for splice. A default pipe holds 16 pages (the 2009 splice
 * thread's limit); the 2010 "Splice status" thread asks for bigger ones with
 * F_SETPIPE_SZ, which we report as given.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kernel.h"
#include "core/pipe.h"

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
	long long v = 0;

	if (kernel_read_ll("/proc/sys/fs/pipe-max-size", &v) || v < 0 ||
	    v > UINT_MAX)
		return 0;
	return (unsigned int)v;
}

int pipe_pool_init(struct pipe_pool *pp, unsigned int max, unsigned int want)
{
	memset(pp, 0, sizeof(*pp));
	pp->max = max;
	pp->want = want;
	if (max) {
		pp->free = calloc(max, sizeof(*pp->free));
		if (!pp->free)
			return -ENOMEM;
	}
	return 0;
}

void pipe_pool_free(struct pipe_pool *pp)
{
	while (pp->nfree) {
		struct dnd_pipe *p = pp->free[--pp->nfree];

		pipe_close(p);
		free(p);
	}
	free(pp->free);
	pp->free = NULL;
}

int pipe_get(struct pipe_pool *pp, struct dnd_pipe **out)
{
	struct dnd_pipe *p;
	int r;

	*out = NULL;
	if (pp->nfree) {
		p = pp->free[--pp->nfree];
	} else {
		if (pp->used >= pp->max)
			return -ENOBUFS;
		p = malloc(sizeof(*p));
		if (!p)
			return -ENOMEM;
		r = pipe_open(p, pp->want);
		if (r == -EPERM && pp->want) {
			r = pipe_open(p, 0);
			pp->shrunk += !r;
		}
		if (r) {
			free(p);
			pp->failed++;
			return r;
		}
		pp->created++;
		if (!pp->min_size || p->size < pp->min_size)
			pp->min_size = p->size;
	}
	if (++pp->used > pp->peak)
		pp->peak = pp->used;
	*out = p;
	return 0;
}

void pipe_put(struct pipe_pool *pp, struct dnd_pipe *p, size_t held)
{
	if (held || pp->nfree >= pp->max) {
		pipe_kill(pp, p);
		return;
	}
	pp->used--;
	pp->free[pp->nfree++] = p;
}

void pipe_kill(struct pipe_pool *pp, struct dnd_pipe *p)
{
	pipe_close(p);
	free(p);
	pp->used--;
	pp->killed++;
}
