// SPDX-License-Identifier: MIT
/*
 * What every live check of `dnd probe` builds on: the result, a loopback TCP
 * connection, bounded waits, non-blocking pipes, a temporary file and a byte
 * pattern. Every fd is non-blocking and every wait is a bounded poll.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/net.h"
#include "core/pipe.h"
#include "probe/probe_check.h"

int probe_res(struct probe_result *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->err = err;
	return err;
}

long long probe_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void probe_pattern_fill(unsigned char *p, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((off + i) % 251);
}

static bool probe_pattern_ok(const unsigned char *p, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)((off + i) % 251))
			return false;
	return true;
}

void probe_conn_close(struct probe_conn *c)
{
	if (c->srv != -1)
		close(c->srv);
	if (c->cli != -1)
		close(c->cli);
	if (c->lfd != -1)
		close(c->lfd);
	c->lfd = c->cli = c->srv = -1;
}

/*
 * Waits up to ms for ev on fd, or, when ep != -1, for the epoll set ep.
 * Returns 1 ready, 0 timed out, or -errno. EINTR is retried: besides
 * signals, the task work io_uring leaves behind after a ring is torn down
 * interrupts the next epoll_wait with EINTR and no signal at all.
 */
int probe_wait_fd(int fd, short ev, int ep, int ms)
{
	long long end = probe_now_ms() + ms;
	struct pollfd pfd = { .fd = fd, .events = ev };
	struct epoll_event ee;
	int n;

	do {
		long long left = end - probe_now_ms();

		left = left < 0 ? 0 : left;
		n = ep != -1 ? epoll_wait(ep, &ee, 1, (int)left)
			     : poll(&pfd, 1, (int)left);
	} while (n == -1 && errno == EINTR && probe_now_ms() < end);
	return n == -1 ? -errno : n;
}

static int probe_conn_wait(int fd, short ev)
{
	int n = probe_wait_fd(fd, ev, -1, DND_PROBE_WAIT_MS);

	return n == 1 ? 0 : n == 0 ? -ETIMEDOUT : n;
}

/*
 * A connected 127.0.0.1 pair, both ends non-blocking: cli sends, srv
 * receives. mss > 0 sets TCP_MAXSEG on both ends before the handshake;
 * rcvbuf > 0 sets SO_RCVBUF before listen() so the window scale covers it.
 */
int probe_conn_open(struct probe_conn *c, int mss, int rcvbuf,
		    struct probe_result *r)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a), el = sizeof(int);
	int e = 0, t = SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK;

	c->cli = c->srv = -1;
	c->lfd = socket(AF_INET, t, 0);
	if (c->lfd == -1 ||
	    (mss > 0 && setsockopt(c->lfd, IPPROTO_TCP, TCP_MAXSEG, &mss,
				   sizeof(mss)) == -1) ||
	    (rcvbuf > 0 && setsockopt(c->lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				      sizeof(rcvbuf)) == -1) ||
	    bind(c->lfd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(c->lfd, 1) == -1 ||
	    getsockname(c->lfd, (struct sockaddr *)&a, &al) == -1)
		goto fail;
	c->cli = socket(AF_INET, t, 0);
	if (c->cli == -1 ||
	    (mss > 0 && setsockopt(c->cli, IPPROTO_TCP, TCP_MAXSEG, &mss,
				   sizeof(mss)) == -1))
		goto fail;
	if (connect(c->cli, (struct sockaddr *)&a, sizeof(a)) == -1 &&
	    errno != EINPROGRESS)
		goto fail;
	e = probe_conn_wait(c->lfd, POLLIN);
	if (e)
		goto out;
	c->srv = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c->srv == -1)
		goto fail;
	e = probe_conn_wait(c->cli, POLLOUT);
	if (!e) {
		if (getsockopt(c->cli, SOL_SOCKET, SO_ERROR, &e, &el) == -1)
			goto fail;
		e = -e;
	}
	goto out;
fail:
	e = -errno;
out:
	if (e) {
		probe_conn_close(c);
		return probe_res(r, e, "loopback TCP connection: %s",
				 strerror(-e));
	}
	return 0;
}

/*
 * Sends n more bytes of pattern without blocking, as far as the window
 * lets them go, then waits until the receiver's queue holds them all or
 * stops growing (the window opens in steps as ACKs return). Returns the
 * bytes queued at the receiver.
 */
long long probe_conn_queue(struct probe_conn *c, size_t n)
{
	unsigned char buf[16384];
	long long start = net_inq(c->srv), q = start, last = -1;
	long long end = probe_now_ms() + DND_PROBE_WAIT_MS;
	size_t sent = 0;
	int stable = 0;

	/* 50 ms without growth: the window is shut, or softirqs are late. */
	while (probe_now_ms() < end && stable < 25) {
		while (sent < n) {
			size_t k =
				n - sent < sizeof(buf) ? n - sent : sizeof(buf);
			ssize_t w;

			probe_pattern_fill(buf, k, sent);
			w = send(c->cli, buf, k, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (w <= 0)
				break;
			sent += (size_t)w;
		}
		q = net_inq(c->srv);
		if (q < 0 || q >= start + (long long)n)
			break;
		stable = q == last ? stable + 1 : 0;
		last = q;
		poll(NULL, 0, 2);
	}
	return q;
}

/* Reads and drops what the socket holds now. */
void probe_sock_discard(int fd)
{
	char buf[16384];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Discards everything the sender has, until both queues are empty. */
void probe_conn_drain(struct probe_conn *c)
{
	long long end = probe_now_ms() + DND_PROBE_WAIT_MS;

	while (probe_now_ms() < end) {
		probe_sock_discard(c->srv);
		if (net_outq(c->cli) == 0 && net_inq(c->srv) == 0)
			return;
		poll(NULL, 0, 2);
	}
}

/* The full segment size of the connection: TCP_INFO's MSS, both views. */
long long probe_conn_mss(const struct probe_conn *c)
{
	struct tcp_info ti;
	long long m = 0;

	if (!net_tcp_info(c->cli, &ti))
		m = ti.tcpi_snd_mss;
	if (!net_tcp_info(c->srv, &ti) && ti.tcpi_rcv_mss > m)
		m = ti.tcpi_rcv_mss;
	return m;
}

/* Reads exactly n bytes from a non-blocking fd, waiting at most a second. */
static int probe_read_exact(int fd, void *buf, size_t n)
{
	size_t got = 0;
	long long end = probe_now_ms() + DND_PROBE_WAIT_MS;

	while (got < n) {
		ssize_t k = read(fd, (char *)buf + got, n - got);

		if (k > 0) {
			got += (size_t)k;
			continue;
		}
		if (k == 0)
			return -ENODATA;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		if (probe_now_ms() >= end ||
		    probe_conn_wait(fd, POLLIN) == -ETIMEDOUT)
			return -ETIMEDOUT;
	}
	return 0;
}

/* A non-blocking pipe of at least want bytes, or the default when the
 * kernel refuses that much (the size is in p->size either way). */
int probe_pipe_nb(struct dnd_pipe *p, unsigned int want,
		  struct probe_result *r)
{
	int e = pipe_open(p, want);

	if (e && want)
		e = pipe_open(p, 0);
	if (!e && (fcntl(p->rd, F_SETFL, O_NONBLOCK) == -1 ||
		   fcntl(p->wr, F_SETFL, O_NONBLOCK) == -1)) {
		e = -errno;
		pipe_close(p);
	}
	return e ? probe_res(r, e, "pipe: %s", strerror(-e)) : 0;
}

void probe_pipe_empty(const struct dnd_pipe *p)
{
	char buf[16384];

	while (read(p->rd, buf, sizeof(buf)) > 0)
		;
}

/* An unnamed file in $TMPDIR or /tmp, gone when closed. */
int probe_tmp_file(struct probe_result *r)
{
	const char *d = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!d || !*d)
		d = "/tmp";
	fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd != -1)
		return fd;
	/* Some file systems lack O_TMPFILE: name a file, unlink it at once. */
	snprintf(path, sizeof(path), "%s/dnd-probe.XXXXXX", d);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd == -1)
		return probe_res(r, -errno,
				 "temporary file in %s: %s; set TMPDIR", d,
				 strerror(errno));
	unlink(path);
	return fd;
}

/*
 * n bytes of pattern went into fd by the path how: read them back and say
 * whether they are intact.
 */
int probe_read_back(struct probe_result *r, int fd, bool file, ssize_t n,
		    const char *how)
{
	unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
	int e = 0;

	if (!buf)
		return probe_res(r, -ENOMEM, "%s: %zd bytes moved; no memory "
				 "to read them back", how, n);
	if (file)
		e = pread(fd, buf, (size_t)n, 0) == n ? 0 : -EIO;
	else
		e = probe_read_exact(fd, buf, (size_t)n);
	if (!e && !probe_pattern_ok(buf, (size_t)n, 0))
		e = -EIO;
	free(buf);
	if (e)
		return probe_res(r, e, "%s moved %zd bytes that did not read "
				 "back intact (%s)", how, n, strerror(-e));
	return probe_res(r, 0, "%s moved %zd bytes, read back intact", how,
			 n);
}
