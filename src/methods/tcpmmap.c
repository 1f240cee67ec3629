// SPDX-License-Identifier: MIT
/*
 * tcpmmap: receive with getsockopt(TCP_ZEROCOPY_RECEIVE), which maps pages
 * of the socket's receive queue into a PROT_READ, MAP_SHARED mapping of the
 * socket instead of copying them; write() then copies the mapped pages into
 * the file (one copy instead of rw's two). Bytes that cannot be mapped are
 * read with recv() (recv_skip_hint says how many), and both are reported.
 *
 * Only whole pages of payload that sit page-aligned in the queue can be
 * mapped, so every segment must carry a multiple of 4096 bytes: an MSS of
 * 4096 * n. The kernel's tcp_mmap selftest sets the loopback MTU to 61512
 * over IPv6 (61440 bytes of payload plus 72 of headers; 61492 over IPv4).
 * The sender matters too: sendfile, splice and MSG_ZEROCOPY leave page-sized
 * fragments, while write() packs data into large page fragments that never
 * map. On plain loopback (MTU 65536, MSS 65483) most bytes are copied; the
 * report says so instead of hiding it.
 *
 * The payload is followed by the protocol trailer, so no call may consume
 * more than it was asked for: the length handed to TCP_ZEROCOPY_RECEIVE and
 * every recv() are bounded by it.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/compat.h"
#include "core/io.h"
#include "core/log.h"
#include "core/stats.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "xfer/xfer.h"

#define TM_WAIT_MS_DEFAULT	60000	/* bound on a wait with --timeout 0 */
#define TM_SLICE_MS		20	/* then take what is queued */

struct tm_priv {
	void *map;		/* the socket, mapped PROT_READ, MAP_SHARED */
	size_t maplen;		/* page multiple */
	char *buf;		/* for bytes that cannot be mapped */
	size_t page;
	int lowat;		/* SO_RCVLOWAT as set last; 1 is the default */
	int wait_ms;
};

static int tm_probe(char *why, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct tcp_zerocopy_receive zc;
	socklen_t zl = sizeof(zc);
	void *map = MAP_FAILED;
	int fd, r = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		r = -errno;
		snprintf(why, len, "cannot open a TCP socket: %s", strerror(-r));
		return r;
	}
	map = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		r = errno == ENODEV ? -ENOSYS : -errno;
		snprintf(why, len, "mmap of a TCP socket: %s (needs Linux "
			 "4.18)", strerror(errno));
		goto out;
	}
	/* Unconnected, it maps nothing, but an old kernel rejects the name. */
	memset(&zc, 0, sizeof(zc));
	zc.address = (uintptr_t)map;
	zc.length = (uint32_t)page;
	if (getsockopt(fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl) == -1 &&
	    errno != ENOTCONN) {
		r = errno == ENOPROTOOPT || errno == EOPNOTSUPP ? -ENOSYS :
								  -errno;
		snprintf(why, len, "getsockopt(TCP_ZEROCOPY_RECEIVE): %s "
			 "(needs Linux 4.18)", strerror(errno));
	}
	munmap(map, page);
out:
	close(fd);
	return r;
}

/* SO_RCVLOWAT so that a wait ends with a mappable amount queued. */
static void tm_lowat(struct dnd_xfer *x, int v)
{
	struct tm_priv *p = x->priv;

	if (p->lowat == v)
		return;
	if (setsockopt(x->sock, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)) == 0)
		p->lowat = v;
}

/*
 * Waits until want bytes are queued or the peer ends the stream, but for
 * TM_SLICE_MS at most: SO_RCVLOWAT counts bytes while the receive buffer
 * fills by the skbs' truesize, so with small segments (MTU 1500, a slow
 * receiver) it can be full with fewer than want bytes queued and the
 * sender stopped by a closed window, and waiting for want would wait for
 * ever (a bench --remote cell under ASan stalled so). The caller then
 * takes what is queued. *end (0: not yet set) bounds the whole wait by
 * wait_ms. 0, or -errno (-EAGAIN: nothing came in time).
 */
static int tm_wait(struct dnd_xfer *x, size_t want, double *end)
{
	struct tm_priv *p = x->priv;
	struct pollfd pfd = { .fd = x->sock, .events = POLLIN };
	int r;

	if (!*end)
		*end = stats_now() + p->wait_ms / 1e3;
	tm_lowat(x, (int)want);
	r = poll(&pfd, 1, TM_SLICE_MS);
	if (r == -1 && errno == EINTR)
		return io_stop_signal ? -EINTR : 0;
	if (r == -1)
		return xfer_fail(x, -errno, "poll socket");
	return r == 0 && stats_now() >= *end ? -EAGAIN : 0;
}

/* What one TCP_ZEROCOPY_RECEIVE left to do. */
struct tm_left {
	size_t skip;		/* bytes to copy before mapping can go on */
	size_t inq;		/* bytes still queued */
	bool eof;		/* nothing queued and the peer has closed */
};

/*
 * Maps up to want bytes (a page multiple) and writes them to the file.
 * Returns bytes mapped (0 with *left saying why), or -errno.
 */
static ssize_t tm_map(struct dnd_xfer *x, size_t want, struct tm_left *left)
{
	struct tm_priv *p = x->priv;
	struct tcp_zerocopy_receive zc;
	int r;

	memset(&zc, 0, sizeof(zc));
	zc.address = (uintptr_t)p->map;
	zc.length = (uint32_t)want;
	r = io_tcp_zc_receive(&x->out.sc, x->sock, &zc);
	if (r == -EIO) {
		left->eof = true;
		return 0;
	}
	if (r)
		return xfer_fail(x, r, "getsockopt(TCP_ZEROCOPY_RECEIVE)");
	if (zc.err)
		return xfer_fail(x, zc.err < 0 ? zc.err : -zc.err,
				 "TCP_ZEROCOPY_RECEIVE");
	DND_BUG_ON(zc.length > want);
	left->skip = zc.recv_skip_hint;
	left->inq = zc.inq;
	if (zc.length) {
		/* The mapped pages are what arrived: read once more here. */
		xfer_hash_inline(x, p->map, zc.length);
		r = io_write_all(&x->out.sc, x->fd, p->map, zc.length);
		if (r)
			return xfer_fail(x, r, "write file");
		x->out.zc.zc_bytes += zc.length;
	}
	return zc.length;
}

/* Copies up to n bytes with recv() and writes them; as recv() returns. */
static ssize_t tm_copy(struct dnd_xfer *x, size_t n)
{
	struct tm_priv *p = x->priv;
	ssize_t m;
	int r;

	if (n > p->maplen)
		n = p->maplen;
	m = io_recv(&x->out.sc, x->sock, p->buf, n, 0);
	if (m <= 0)
		return m == 0 || m == -EAGAIN ? m :
		       xfer_fail(x, (int)m, "recv socket");
	xfer_hash_inline(x, p->buf, (size_t)m);
	r = io_write_all(&x->out.sc, x->fd, p->buf, (size_t)m);
	if (r)
		return xfer_fail(x, r, "write file");
	x->out.zc.copied_bytes += (uint64_t)m;
	return m;
}

static ssize_t tm_recv_pages(struct dnd_xfer *x, size_t len)
{
	struct tm_priv *p = x->priv;
	size_t want = len < p->maplen ? len : p->maplen;
	size_t pages = want / p->page * p->page;
	double end = 0;

	/* Less than a page left: nothing can map, so copy the tail. */
	if (!pages)
		return tm_copy(x, want);
	for (bool waited = false;; waited = true) {
		struct tm_left left = { 0 };
		ssize_t n = tm_map(x, pages, &left);
		int r;

		if (n || left.eof)
			return n;
		/*
		 * Less than a page queued comes back as "skip it all". The
		 * pages asked for are payload that will arrive, so wait for
		 * them once rather than copy a fragment. After that, or with
		 * unmappable bytes in the way, copy what the kernel says;
		 * with nothing queued, wait on.
		 */
		if (waited || left.inq >= pages) {
			size_t c = left.skip ? left.skip : left.inq;

			if (c)
				return tm_copy(x, c < want ? c : want);
		}
		r = tm_wait(x, pages, &end);
		if (r)
			return r;
	}
}

/*
 * A wait leaves SO_RCVLOWAT at the pages it wanted: put it back to 1
 * before the driver reads on. Left high, the driver's poll for the next
 * segment's header or the trailer waits for bytes that never come (a
 * stream from a pipe ends with a short segment): served pushes from a
 * pipe stalled 60 s, to the socket's timeout, with the last 2379 bytes
 * queued.
 */
static ssize_t tm_recv(struct dnd_xfer *x, size_t len)
{
	ssize_t n = tm_recv_pages(x, len);

	tm_lowat(x, 1);
	return n;
}

static int tm_finish(struct dnd_xfer *x)
{
	tm_lowat(x, 1);
	return 0;
}

static void tm_teardown(struct dnd_xfer *x)
{
	struct tm_priv *p = x->priv;

	if (!p)
		return;
	if (x->sock >= 0)
		tm_lowat(x, 1);
	if (p->map)
		munmap(p->map, p->maplen);
	free(p->buf);
	free(p);
	x->priv = NULL;
}

static int tm_setup(struct dnd_xfer *x)
{
	struct tm_priv *p = calloc(1, sizeof(*p));
	struct timeval tv = { 0 };
	socklen_t l = sizeof(tv);
	char a[32];
	int r;

	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->maplen = (x->cfg->bsz + p->page - 1) / p->page * p->page;
	p->lowat = 1;
	p->buf = malloc(p->maplen);
	if (!p->buf)
		return -ENOMEM;
	r = io_mmap(&x->out.sc, &p->map, p->maplen, PROT_READ, MAP_SHARED,
		    x->sock, 0);
	if (r) {
		p->map = NULL;
		return xfer_fail(x, r, "mmap socket");
	}
	getsockopt(x->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, &l);
	p->wait_ms = (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000);
	if (p->wait_ms <= 0)
		p->wait_ms = TM_WAIT_MS_DEFAULT;
	x->out.eff_bsz = p->maplen;
	x->out.zc.set = true;
	snprintf(x->out.detail, sizeof(x->out.detail), "TCP_ZEROCOPY_RECEIVE into a "
		 "%s socket mapping; only page-aligned whole pages of payload "
		 "map (MSS 4096*n)", opt_fmt_size(p->maplen, a, sizeof(a)));
	return 0;
}

const struct dnd_method method_tcpmmap = {
	.name = "tcpmmap",
	.send_help = NULL,
	.recv_help = "TCP_ZEROCOPY_RECEIVE maps pages, write() them; recv() "
		     "the rest",
	.flags = DND_M_ZEROCOPY | DND_M_RECVBUF,
	.nbuf = 1,
	.probe = tm_probe,
	.setup = tm_setup,
	.recv = tm_recv,
	.finish = tm_finish,
	.teardown = tm_teardown,
};
