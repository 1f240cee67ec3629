// SPDX-License-Identifier: MIT
/*
 * mmap: the file side is a mapped window instead of a buffer.
 *   send: map a window of the source, write() it to the socket, unmap.
 *   recv: ftruncate the file to cover the window, map it shared, read() the
 *         socket straight into it (topping up short reads), unmap.
 * One copy per byte instead of two, paid for with a map/unmap and page faults
 * per window: seed 000 measured it slowest on both sides (366 and 150 MB/s).
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io.h"
#include "method.h"
#include "xfer.h"

struct mmap_priv {
	size_t window;		/* page multiple */
	size_t page;
	off_t fsize;		/* receiver: current size of the file */
};

static int mmap_check(const struct dnd_xfer *x, char *why, size_t len)
{
	if (x->sender && x->ep != DND_EP_FILE && x->ep != DND_EP_ZERO) {
		snprintf(why, len, "mmap cannot send from a pipe or stream "
			 "(nothing to map); use -m rw, splice or vmsplice");
		return -EINVAL;
	}
	if (!x->sender && x->ep != DND_EP_FILE) {
		snprintf(why, len, "mmap cannot receive into %s (it needs a "
			 "regular file to map); use -m rw, splice or vmsplice%s",
			 x->ep == DND_EP_NULL ? "/dev/null" : "a pipe or stream",
			 x->ep == DND_EP_NULL ? ", or -m null" : "");
		return -EINVAL;
	}
	return 0;
}

static int mmap_setup(struct dnd_xfer *x)
{
	struct mmap_priv *p = calloc(1, sizeof(*p));
	struct stat st;

	if (!p)
		return -ENOMEM;
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->window = (x->bsz + p->page - 1) / p->page * p->page;
	if (!x->sender) {
		if (fstat(x->fd, &st) == -1) {
			free(p);
			return -errno;
		}
		p->fsize = st.st_size;
	}
	x->priv = p;
	x->eff_bsz = p->window;
	return 0;
}

static ssize_t mmap_send(struct dnd_xfer *x, size_t len)
{
	struct mmap_priv *p = x->priv;
	/* /dev/zero maps as fresh anonymous memory at any offset. */
	off_t at = x->ep == DND_EP_ZERO ? 0 : x->pos;
	off_t base = at & ~(off_t)(p->page - 1);
	size_t delta = (size_t)(at - base);
	size_t n = p->window - delta;
	void *map;
	int r;

	if (n > len)
		n = len;
	r = io_mmap(&x->sc, &map, delta + n, PROT_READ, MAP_PRIVATE, x->fd,
		    base);
	if (r)
		return xfer_fail(x, r, "mmap source");
	r = io_write_all(&x->sc, x->sock, (char *)map + delta, n);
	io_munmap(&x->sc, map, delta + n);
	if (r)
		return xfer_fail(x, r, "write socket");
	return (ssize_t)n;
}

static ssize_t mmap_recv(struct dnd_xfer *x, size_t len)
{
	struct mmap_priv *p = x->priv;
	off_t base = x->pos & ~(off_t)(p->page - 1);
	size_t delta = (size_t)(x->pos - base);
	size_t want = p->window - delta, got = 0;
	void *map;
	int r;

	if (want > len)
		want = len;
	if (x->pos + (off_t)want > p->fsize) {
		r = io_ftruncate(&x->sc, x->fd, x->pos + (off_t)want);
		if (r)
			return xfer_fail(x, r, "ftruncate file");
		p->fsize = x->pos + (off_t)want;
	}
	r = io_mmap(&x->sc, &map, delta + want, PROT_READ | PROT_WRITE,
		    MAP_SHARED, x->fd, base);
	if (r)
		return xfer_fail(x, r, "mmap file");
	while (got < want) {
		ssize_t n = io_read(&x->sc, x->sock, (char *)map + delta + got,
				    want - got);

		if (n < 0) {
			io_munmap(&x->sc, map, delta + want);
			return xfer_fail(x, (int)n, "read socket");
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	io_munmap(&x->sc, map, delta + want);
	return (ssize_t)got;
}

/* The last window may have extended the file past the data: cut it back. */
static int mmap_finish(struct dnd_xfer *x)
{
	struct mmap_priv *p = x->priv;
	int r;

	if (x->sender || p->fsize <= x->pos)
		return 0;
	r = io_ftruncate(&x->sc, x->fd, x->pos);
	if (r)
		return xfer_fail(x, r, "ftruncate file");
	p->fsize = x->pos;
	return 0;
}

static void mmap_teardown(struct dnd_xfer *x)
{
	free(x->priv);
	x->priv = NULL;
}

const struct dnd_method method_mmap = {
	.name = "mmap",
	.send_help = "mmap() a window of the source, write() it to the socket",
	.recv_help = "ftruncate()+mmap() a window of the file, read() into it",
	.flags = 0,
	.check = mmap_check,
	.setup = mmap_setup,
	.send = mmap_send,
	.recv = mmap_recv,
	.finish = mmap_finish,
	.teardown = mmap_teardown,
};
