// SPDX-License-Identifier: MIT
/*
 * mmap: the file side is a mapped window instead of a buffer.
 *   send: map a window of the source, write() it to the socket, unmap.
 *   recv: extend the file to cover the window, map it shared, read() the
 *         socket straight into it (topping up short reads), unmap.
 * One copy per byte instead of two, paid for with a map/unmap and page faults
 * per window: the 2006 thread measured it slowest on both sides (366 and
 * 150 MB/s).
 *
 * The 2006 program extended the file with ftruncate(). On a full disk a store
 * into such a sparse mapped page kills the process with SIGBUS, leaving a torn
 * temporary file; so the window's blocks are reserved with fallocate() and
 * ENOSPC arrives as an error. Where the file system cannot fallocate, the
 * file is extended with ftruncate() as in the 2006 program, and the report says
 * so: straight to the end of all streams' data when that is known, since a
 * stream that set the size to the end of its own window would shrink the
 * file under the mappings of streams further on (EFAULT, or SIGBUS).
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

struct mmap_priv {
	size_t window;		/* page multiple */
	size_t page;
	off_t fsize;		/* receiver: current size of the file */
	off_t end;		/* receiver: where all streams' data ends; -1
				 * unknown */
	bool no_fallocate;	/* the file system refused fallocate() */
};

static int mmap_check(const struct xfer_cfg *c, char *why, size_t len)
{
	if (c->sender && c->ep != DND_EP_FILE && c->ep != DND_EP_ZERO) {
		snprintf(why, len, "mmap cannot send from a pipe or stream "
			 "(nothing to map); use -m rw, splice or vmsplice");
		return -EINVAL;
	}
	if (!c->sender && c->ep != DND_EP_FILE) {
		snprintf(why, len, "mmap cannot receive into %s (it needs a "
			 "regular file to map); use -m rw, splice or vmsplice%s",
			 c->ep == DND_EP_NULL ? "/dev/null" : "a pipe or stream",
			 c->ep == DND_EP_NULL ? ", or -m null" : "");
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
	p->window = (x->cfg->bsz + p->page - 1) / p->page * p->page;
	if (!x->cfg->sender) {
		if (fstat(x->fd, &st) == -1) {
			free(p);
			return -errno;
		}
		p->fsize = st.st_size;
		p->end = xfer_end(x->t);
	}
	x->priv = p;
	x->out.eff_bsz = p->window;
	return 0;
}

static ssize_t mmap_send(struct dnd_xfer *x, size_t len)
{
	struct mmap_priv *p = x->priv;
	/* /dev/zero maps as fresh anonymous memory at any offset. */
	off_t at = x->cfg->ep == DND_EP_ZERO ? 0 : x->pos;
	off_t base = at & ~(off_t)(p->page - 1);
	size_t delta = (size_t)(at - base);
	size_t n = p->window - delta;
	void *map;
	int r;

	if (n > len)
		n = len;
	r = io_mmap(&x->out.sc, &map, delta + n, PROT_READ, MAP_PRIVATE, x->fd,
		    base);
	if (r)
		return xfer_fail(x, r, "mmap source");
	r = io_write_all(&x->out.sc, x->sock, (char *)map + delta, n);
	/* Only after write() read the pages without EFAULT (see below). */
	if (!r)
		xfer_hash_inline(x, (char *)map + delta, n);
	io_munmap(&x->out.sc, map, delta + n);
	/* A mapping past the end of a file that shrank under us: write()
	 * reports EFAULT (touching it would be SIGBUS). */
	if (r == -EFAULT && x->cfg->ep == DND_EP_FILE)
		return xfer_fail(x, -ENODATA, "source ended early");
	if (r)
		return xfer_fail(x, r, "write socket");
	return (ssize_t)n;
}

/*
 * Makes the file size at least `to`, with blocks reserved where possible;
 * else with ftruncate to the end of the data when known: every stream
 * then sets the same size, and none shrinks the file.
 */
static int mmap_extend(struct dnd_xfer *x, struct mmap_priv *p, off_t to)
{
	int r = -EOPNOTSUPP;

	if (!p->no_fallocate)
		r = io_fallocate(&x->out.sc, x->fd, p->fsize, to - p->fsize);
	if (r == -EOPNOTSUPP) {
		if (!p->no_fallocate)
			snprintf(x->out.detail, sizeof(x->out.detail), "mmap: this file "
				 "system cannot fallocate; file extended "
				 "with ftruncate (a full disk means SIGBUS)");
		p->no_fallocate = true;
		if (p->end >= to)
			to = p->end;
		r = io_ftruncate(&x->out.sc, x->fd, to);
	}
	if (r)
		return xfer_fail(x, r, p->no_fallocate ? "ftruncate file" :
				 "fallocate file");
	p->fsize = to;
	return 0;
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
		r = mmap_extend(x, p, x->pos + (off_t)want);
		if (r)
			return r;
	}
	r = io_mmap(&x->out.sc, &map, delta + want, PROT_READ | PROT_WRITE,
		    MAP_SHARED, x->fd, base);
	if (r)
		return xfer_fail(x, r, "mmap file");
	while (got < want) {
		ssize_t n = io_read(&x->out.sc, x->sock, (char *)map + delta + got,
				    want - got);

		if (n < 0) {
			io_munmap(&x->out.sc, map, delta + want);
			x->out.held = got;
			return xfer_fail(x, (int)n, "read socket");
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	/* The mapped pages are the landed file's, just written. */
	xfer_hash_inline(x, (char *)map + delta, got);
	io_munmap(&x->out.sc, map, delta + want);
	return (ssize_t)got;
}

/*
 * The file half alone: memcpy into mapped windows of the file (filebench's
 * mmap path). The receiver instead read()s the socket straight into them.
 */
static ssize_t mmap_put(struct dnd_xfer *x, const void *buf, size_t n)
{
	struct mmap_priv *p = x->priv;
	off_t at = x->pos;
	size_t done = 0;
	int r;

	while (done < n) {
		off_t base = at & ~(off_t)(p->page - 1);
		size_t delta = (size_t)(at - base), k = p->window - delta;
		void *map;

		if (k > n - done)
			k = n - done;
		if (at + (off_t)k > p->fsize) {
			r = mmap_extend(x, p, at + (off_t)k);
			if (r)
				return r;
		}
		r = io_mmap(&x->out.sc, &map, delta + k, PROT_READ | PROT_WRITE,
			    MAP_SHARED, x->fd, base);
		if (r)
			return xfer_fail(x, r, "mmap file");
		memcpy((char *)map + delta, (const char *)buf + done, k);
		io_munmap(&x->out.sc, map, delta + k);
		done += k;
		at += (off_t)k;
	}
	return (ssize_t)n;
}

/* The last window may have extended the file past the data: cut it back. */
static int mmap_finish(struct dnd_xfer *x)
{
	struct mmap_priv *p = x->priv;
	int r;

	/* Only the stream that ends the file: the others' windows lie
	 * inside it. */
	if (x->cfg->sender || !x->last || p->fsize <= x->pos)
		return 0;
	r = io_ftruncate(&x->out.sc, x->fd, x->pos);
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
	.recv_help = "fallocate()+mmap() a window of the file, read() into it",
	.flags = DND_M_USERBUF | DND_M_USERSOCK | DND_M_RECVBUF,
	.nbuf = 1,
	.check = mmap_check,
	.setup = mmap_setup,
	.send = mmap_send,
	.recv = mmap_recv,
	.put = mmap_put,
	.finish = mmap_finish,
	.teardown = mmap_teardown,
};
