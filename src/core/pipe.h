/* SPDX-License-Identifier: MIT */
/* Pipes for the splice paths, with the size the kernel actually gave. */
#ifndef DND_PIPE_H
#define DND_PIPE_H

#include <stdbool.h>
#include <stddef.h>

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

/*
 * A pool of empty pipes of one size, for the relay [hap pipe.c]. Pipes are
 * taken only while a direction has data in flight and given back when it
 * drains, so thousands of idle flows hold no pipes. `max` caps the pipes
 * alive (in use plus pooled), as HAProxy's maxpipes does.
 */
struct pipe_pool {
	struct dnd_pipe **free;	/* stack of empty pipes */
	unsigned int nfree;
	unsigned int used;	/* handed out and not yet put or killed */
	unsigned int peak;	/* highest `used` seen */
	unsigned int max;	/* used + nfree never exceeds it */
	unsigned int want;	/* F_SETPIPE_SZ for new pipes; 0: kernel default */
	unsigned int min_size;	/* smallest size the kernel gave; 0: none yet */
	unsigned long long created, killed, failed;
	unsigned long long shrunk;	/* opened at the default size instead */
};

/* Prepares an empty pool. Returns 0 or -ENOMEM. */
int pipe_pool_init(struct pipe_pool *pp, unsigned int max, unsigned int want);

/* Closes the pooled pipes. Pipes still handed out must be killed first. */
void pipe_pool_free(struct pipe_pool *pp);

/*
 * Hands out an empty pipe: a pooled one, or a new one while under max. When
 * the size cannot be had (EPERM: past fs.pipe-user-pages-soft without
 * CAP_SYS_RESOURCE) the pipe keeps the kernel's default size, counted in
 * shrunk. Returns 0 with *out set, -ENOBUFS at max, or -errno (EMFILE ...).
 */
int pipe_get(struct pipe_pool *pp, struct dnd_pipe **out);

/*
 * Gives p back. held is what the caller knows is still inside: a pipe that
 * holds data is killed instead, since the next user would send those bytes.
 */
void pipe_put(struct pipe_pool *pp, struct dnd_pipe *p, size_t held);

/* Closes and frees a handed-out pipe (it held data, or the flow broke). */
void pipe_kill(struct pipe_pool *pp, struct dnd_pipe *p);

#endif
