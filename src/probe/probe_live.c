// SPDX-License-Identifier: MIT
/*
 * Live checks for `dnd probe`: a loopback TCP connection, pipes and a
 * temporary file, and seed 004's kernel behaviours. Every fd is non-blocking
 * and every wait is a bounded poll, so no check can hang.
 */
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/errqueue.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/net.h"
#include "core/pipe.h"
#include "core/zcopy.h"
#include "probe/probe_live.h"

#define PROBE_WAIT_MS 1000 /* bound on each wait of a live check */
/* Seed 004's segments came off Ethernet; loopback's 64 KiB MSS would turn
 * "many segments queued" into two or three. */
#define PROBE_MSS     1448
#define PROBE_RCVBUF  (2 << 20) /* room to queue hundreds of segments */
#define PROBE_BIGPIPE (1 << 20)
#define PROBE_SPLICE  (SPLICE_F_NONBLOCK | SPLICE_F_MOVE)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pattern_fill(unsigned char *p, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((off + i) % 251);
}

static bool pattern_ok(const unsigned char *p, size_t n, size_t off)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)((off + i) % 251))
			return false;
	return true;
}

/* ---- loopback connection and pipe ---- */

struct probe_conn {
	int lfd, cli, srv;
};

static void conn_close(struct probe_conn *c)
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
static int wait_fd(int fd, short ev, int ep, int ms)
{
	long long end = now_ms() + ms;
	struct pollfd pfd = { .fd = fd, .events = ev };
	struct epoll_event ee;
	int n;

	do {
		long long left = end - now_ms();

		left = left < 0 ? 0 : left;
		n = ep != -1 ? epoll_wait(ep, &ee, 1, (int)left)
			     : poll(&pfd, 1, (int)left);
	} while (n == -1 && errno == EINTR && now_ms() < end);
	return n == -1 ? -errno : n;
}

static int conn_wait(int fd, short ev)
{
	int n = wait_fd(fd, ev, -1, PROBE_WAIT_MS);

	return n == 1 ? 0 : n == 0 ? -ETIMEDOUT : n;
}

/*
 * A connected 127.0.0.1 pair, both ends non-blocking: cli sends, srv
 * receives. mss > 0 sets TCP_MAXSEG on both ends before the handshake;
 * rcvbuf > 0 sets SO_RCVBUF before listen() so the window scale covers it.
 */
static int conn_open(struct probe_conn *c, int mss, int rcvbuf,
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
	e = conn_wait(c->lfd, POLLIN);
	if (e)
		goto out;
	c->srv = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c->srv == -1)
		goto fail;
	e = conn_wait(c->cli, POLLOUT);
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
		conn_close(c);
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
static long long conn_queue(struct probe_conn *c, size_t n)
{
	unsigned char buf[16384];
	long long start = net_inq(c->srv), q = start, last = -1;
	long long end = now_ms() + PROBE_WAIT_MS;
	size_t sent = 0;
	int stable = 0;

	/* 50 ms without growth: the window is shut, or softirqs are late. */
	while (now_ms() < end && stable < 25) {
		while (sent < n) {
			size_t k =
				n - sent < sizeof(buf) ? n - sent : sizeof(buf);
			ssize_t w;

			pattern_fill(buf, k, sent);
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
static void sock_discard(int fd)
{
	char buf[16384];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* Discards everything the sender has, until both queues are empty. */
static void conn_drain(struct probe_conn *c)
{
	long long end = now_ms() + PROBE_WAIT_MS;

	while (now_ms() < end) {
		sock_discard(c->srv);
		if (net_outq(c->cli) == 0 && net_inq(c->srv) == 0)
			return;
		poll(NULL, 0, 2);
	}
}

/* The full segment size of the connection: TCP_INFO's MSS, both views. */
static long long conn_mss(const struct probe_conn *c)
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
static int read_exact(int fd, void *buf, size_t n)
{
	size_t got = 0;
	long long end = now_ms() + PROBE_WAIT_MS;

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
		if (now_ms() >= end || conn_wait(fd, POLLIN) == -ETIMEDOUT)
			return -ETIMEDOUT;
	}
	return 0;
}

/* A non-blocking pipe of at least want bytes, or the default when the
 * kernel refuses that much (the size is in p->size either way). */
static int pipe_nb(struct dnd_pipe *p, unsigned int want,
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

static void pipe_empty(const struct dnd_pipe *p)
{
	char buf[16384];

	while (read(p->rd, buf, sizeof(buf)) > 0)
		;
}

/* An unnamed file in $TMPDIR or /tmp, gone when closed. */
static int tmp_file(struct probe_result *r)
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

/* ---- pipes, splice, vmsplice, sendfile ---- */

int probe_live_splice_sock_pipe(struct probe_result *r)
{
	unsigned char buf[65536];
	struct probe_conn c;
	struct dnd_pipe p;
	ssize_t n;
	int e;

	if ((e = conn_open(&c, 0, 0, r)))
		return e;
	if ((e = pipe_nb(&p, 0, r))) {
		conn_close(&c);
		return e;
	}
	conn_queue(&c, sizeof(buf));
	n = splice(c.srv, NULL, p.wr, NULL, sizeof(buf), PROBE_SPLICE);
	if (n == -1)
		e = probe_res(r, -errno, "splice(socket -> pipe): %s",
			      strerror(errno));
	else if ((e = read_exact(p.rd, buf, (size_t)n)) ||
		 !pattern_ok(buf, (size_t)n, 0))
		e = probe_res(
			r, e ? e : -EIO,
			"splice(socket -> pipe) moved %zd "
			"bytes but the pipe did not give them back intact",
			n);
	else
		e = probe_res(r, 0,
			      "moved %zd bytes from a loopback socket into a "
			      "pipe, intact",
			      n);
	r->val[0] = n;
	pipe_close(&p);
	conn_close(&c);
	return e;
}

int probe_live_splice_pipe_file(struct probe_result *r)
{
	unsigned char buf[32768];
	struct dnd_pipe p;
	loff_t off = 0;
	ssize_t n = -1;
	int fd, e;

	if ((fd = tmp_file(r)) < 0)
		return fd;
	if ((e = pipe_nb(&p, 0, r))) {
		close(fd);
		return e;
	}
	pattern_fill(buf, sizeof(buf), 0);
	if (write(p.wr, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		e = probe_res(r, -EIO, "write into a pipe: short or failed");
	else if ((n = splice(p.rd, NULL, fd, &off, sizeof(buf),
			     PROBE_SPLICE)) == -1)
		e = probe_res(r, errno == EINVAL ? -EOPNOTSUPP : -errno,
			      "splice(pipe -> file) in %s: %s%s",
			      getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			      strerror(errno),
			      errno == EINVAL
				      ? " (this file system cannot take splice)"
				      : "");
	else if (pread(fd, buf, (size_t)n, 0) != n ||
		 !pattern_ok(buf, (size_t)n, 0))
		e = probe_res(r, -EIO,
			      "splice(pipe -> file) wrote %zd bytes that "
			      "do not read back intact",
			      n);
	else
		e = probe_res(r, 0,
			      "moved %zd bytes from a pipe into a temporary "
			      "file, intact",
			      n);
	r->val[0] = n;
	pipe_close(&p);
	close(fd);
	return e;
}

int probe_live_vmsplice(struct probe_result *r)
{
	size_t len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	unsigned char back[16384];
	struct dnd_pipe p;
	struct iovec iov;
	ssize_t n;
	int e;

	iov.iov_len = len < sizeof(back) ? len : sizeof(back);
	iov.iov_base = mmap(NULL, iov.iov_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (iov.iov_base == MAP_FAILED)
		return probe_res(r, -ENOMEM, "mmap %zu bytes: %s", iov.iov_len,
				 strerror(errno));
	if (!(e = pipe_nb(&p, 0, r))) {
		pattern_fill(iov.iov_base, iov.iov_len, 0);
		n = vmsplice(p.wr, &iov, 1, SPLICE_F_NONBLOCK);
		if (n == -1)
			e = probe_res(r, -errno, "vmsplice: %s",
				      strerror(errno));
		else if (read_exact(p.rd, back, (size_t)n) ||
			 !pattern_ok(back, (size_t)n, 0))
			e = probe_res(r, -EIO,
				      "vmsplice took %zd bytes that the "
				      "pipe did not give back intact",
				      n);
		else
			e = probe_res(r, 0,
				      "%zd page-aligned bytes into a pipe by "
				      "reference, read back intact",
				      n);
		r->val[0] = n;
		pipe_close(&p);
	}
	munmap(iov.iov_base, iov.iov_len);
	return e;
}

int probe_live_sendfile(struct probe_result *r)
{
	unsigned char buf[32768];
	struct probe_conn c;
	off_t off = 0;
	ssize_t n;
	int fd, e;

	if ((fd = tmp_file(r)) < 0)
		return fd;
	pattern_fill(buf, sizeof(buf), 0);
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		close(fd);
		return probe_res(r, -EIO, "write a temporary file: %s",
				 strerror(errno));
	}
	if ((e = conn_open(&c, 0, 0, r))) {
		close(fd);
		return e;
	}
	memset(buf, 0, sizeof(buf));
	n = sendfile(c.cli, fd, &off, sizeof(buf));
	if (n == -1)
		e = probe_res(r, errno == EINVAL ? -EOPNOTSUPP : -errno,
			      "sendfile(file -> socket): %s", strerror(errno));
	else if (read_exact(c.srv, buf, (size_t)n) ||
		 !pattern_ok(buf, (size_t)n, 0))
		e = probe_res(r, -EIO,
			      "sendfile sent %zd bytes that did not arrive "
			      "intact",
			      n);
	else
		e = probe_res(r, 0,
			      "%zd bytes from a temporary file to a loopback "
			      "socket, intact",
			      n);
	r->val[0] = n;
	conn_close(&c);
	close(fd);
	return e;
}

/* ---- zero copy ---- */

/* Adds the MSG_ZEROCOPY completions waiting on fd's error queue. */
static int zc_reap(int fd, long long *done, long long *copied)
{
	char ctl[CMSG_SPACE(sizeof(struct sock_extended_err) +
			    sizeof(struct sockaddr_in6))];
	struct msghdr m = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct zcopy_done d;
	int e;

	if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) == -1)
		return errno == EAGAIN ? 0 : -errno;
	e = zcopy_parse(&m, &d);
	if (e > 0) {
		*done += (long long)zcopy_calls(&d);
		if (d.copied)
			*copied += (long long)zcopy_calls(&d);
	}
	return e < 0 ? e : 0;
}

/* Sends n bytes with MSG_ZEROCOPY and waits for their completions. */
static int zc_send(struct probe_conn *c, size_t n, struct probe_result *r)
{
	void *buf = mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long long end = now_ms() + PROBE_WAIT_MS, done = 0, copied = 0, calls;
	ssize_t w;
	int e = 0;

	if (buf == MAP_FAILED)
		return probe_res(r, -ENOMEM, "mmap: %s", strerror(errno));
	pattern_fill(buf, n, 0);
	w = send(c->cli, buf, n, MSG_ZEROCOPY | MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w == -1) {
		e = probe_res(r, -errno, "send(MSG_ZEROCOPY): %s%s",
			      strerror(errno),
			      errno == ENOBUFS
				      ? " (optmem or locked-memory limit; "
					"see net.core.optmem_max and ulimit -l)"
				      : "");
		goto out;
	}
	calls = 1;
	while (!e && done < calls && now_ms() < end) {
		struct pollfd pfd = { .fd = c->cli, .events = 0 };

		sock_discard(c->srv);
		e = zc_reap(c->cli, &done, &copied);
		if (!e && done < calls)
			poll(&pfd, 1, 5); /* POLLERR: completion queued */
	}
	r->val[1] = w;
	r->val[2] = done;
	r->val[3] = copied;
	if (e)
		probe_res(r, e, "recvmsg(MSG_ERRQUEUE): %s", strerror(-e));
	else if (!done)
		e = probe_res(r, -ETIMEDOUT,
			      "SO_ZEROCOPY accepted and %zd bytes "
			      "sent, but no completion came back within %d ms",
			      w, PROBE_WAIT_MS);
	else if (copied)
		probe_res(r, 0, "SO_ZEROCOPY accepted; %zd bytes sent, "
			  "completion SO_EE_CODE_ZEROCOPY_COPIED: the kernel "
			  "copied (expected on loopback: local delivery takes "
			  "a deferred copy)", w);
	else
		probe_res(r, 0, "SO_ZEROCOPY accepted; %zd bytes sent, "
			  "completion without COPIED: the pages went by "
			  "reference", w);
out:
	munmap(buf, n);
	return e;
}

int probe_live_msg_zerocopy(struct probe_result *r)
{
	struct probe_conn c;
	int one = 1, e;

	if ((e = conn_open(&c, 0, 0, r)))
		return e;
	r->val[0] = 0;
	if (setsockopt(c.cli, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) == -1)
		e = probe_res(r, errno == ENOPROTOOPT ? -ENOSYS : -errno,
			      "setsockopt(SO_ZEROCOPY): %s%s", strerror(errno),
			      errno == ENOPROTOOPT ? " (Linux 4.14+)" : "");
	else {
		r->val[0] = 1;
		e = zc_send(&c, 65536, r);
	}
	conn_close(&c);
	return e;
}

int probe_live_tcp_zc_receive(struct probe_result *r)
{
	size_t len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	struct tcp_zerocopy_receive zc;
	socklen_t zl = sizeof(zc);
	struct probe_conn c;
	void *map;
	int e;

	if ((e = conn_open(&c, 0, 0, r)))
		return e;
	/* The receive path maps socket pages into this window. */
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, c.srv, 0);
	if (map == MAP_FAILED) {
		e = probe_res(r, errno == ENODEV ? -ENOSYS : -errno,
			      "mmap of a TCP socket: %s", strerror(errno));
		conn_close(&c);
		return e;
	}
	memset(&zc, 0, sizeof(zc));
	zc.address = (uint64_t)(uintptr_t)map;
	zc.length = (uint32_t)len;
	if (getsockopt(c.srv, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl) ==
	    -1)
		e = probe_res(r,
			      errno == ENOPROTOOPT || errno == EOPNOTSUPP
				      ? -ENOSYS
				      : -errno,
			      "getsockopt(TCP_ZEROCOPY_RECEIVE): %s",
			      strerror(errno));
	else
		e = probe_res(
			r, 0,
			"getsockopt(TCP_ZEROCOPY_RECEIVE) accepted on a "
			"mapped loopback socket; pages map only from frames of "
			"whole pages (MSS 4096+12 or MTU 61512 on loopback)");
	munmap(map, len);
	conn_close(&c);
	return e;
}

/* ---- network namespaces ---- */

int probe_live_netns(struct probe_result *r)
{
	long long end = now_ms() + PROBE_WAIT_MS * 2;
	int st = 0, e;
	pid_t pid = fork(), w = 0;

	if (pid == -1)
		return probe_res(r, -errno, "fork: %s", strerror(errno));
	/* The child tries, so this process keeps its namespace. */
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) == -1 ? (errno & 0x7f) : 0);
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() < end)
		poll(NULL, 0, 2);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return probe_res(r, -ETIMEDOUT,
				 "unshare(CLONE_NEWNET) did not return "
				 "within %d ms",
				 PROBE_WAIT_MS * 2);
	}
	if (w == -1 || !WIFEXITED(st))
		return probe_res(r, -ECHILD,
				 "the unshare(CLONE_NEWNET) child died");
	e = WEXITSTATUS(st);
	if (e == EPERM)
		return probe_res(r, -EPERM,
				 "unshare(CLONE_NEWNET): %s (needs root "
				 "or CAP_SYS_ADMIN)",
				 strerror(e));
	if (e)
		return probe_res(r, e == EINVAL ? -ENOSYS : -e,
				 "unshare(CLONE_NEWNET): %s", strerror(e));
	return probe_res(r, 0, "a child created a network namespace");
}

/* ---- seed 004: non-blocking splice from a socket with data queued ---- */

struct seed_live {
	struct probe_conn c;
	struct dnd_pipe p;
	long long mss;	  /* one full segment, from TCP_INFO */
	long long queued; /* at the receiver once the sender stopped */
};

static void seed_close(struct seed_live *s)
{
	pipe_close(&s->p);
	conn_close(&s->c);
}

/* Ethernet-sized segments queued on the receiver, and a pipe of pipe_want
 * bytes (0: the default 16 slots). Fails -EAGAIN unless min_segs queued. */
static int seed_open(struct seed_live *s, size_t send, unsigned int pipe_want,
		     long long min_segs, struct probe_result *r)
{
	int e = conn_open(&s->c, PROBE_MSS, PROBE_RCVBUF, r);

	s->p.rd = s->p.wr = -1;
	if (e)
		return e;
	if ((e = pipe_nb(&s->p, pipe_want, r))) {
		conn_close(&s->c);
		return e;
	}
	s->queued = conn_queue(&s->c, send);
	s->mss = conn_mss(&s->c);
	if (s->mss <= 0 || s->queued < min_segs * s->mss) {
		seed_close(s);
		return probe_res(r, -EAGAIN,
				 "inconclusive: only %lld bytes "
				 "queued on the loopback socket (MSS %lld), "
				 "fewer than %lld segments",
				 s->queued, s->mss, min_segs);
	}
	return 0;
}

/* (a) Willy Tarreau's 2009 fix: before it, a non-blocking tcp_splice_read()
 * returned after one segment whatever len asked for. */
int probe_live_seed004_a(struct probe_result *r)
{
	struct seed_live s;
	ssize_t n;
	int e = seed_open(&s, 512 << 10, PROBE_BIGPIPE, 8, r);

	if (e)
		return e;
	r->val[0] = s.mss;
	r->val[1] = s.queued;
	n = splice(s.c.srv, NULL, s.p.wr, NULL, s.p.size, PROBE_SPLICE);
	if (n == -1)
		e = probe_res(r, -errno, "splice(socket -> pipe): %s",
			      strerror(errno));
	else
		e = probe_res(
			r, n > s.mss ? 0 : -EOPNOTSUPP,
			"one non-blocking splice(socket -> %u-byte pipe) "
			"took %zd bytes = %.1f segments of MSS %lld, with "
			"%lld bytes queued",
			s.p.size, n, (double)n / (double)s.mss, s.mss,
			s.queued);
	r->val[2] = n;
	seed_close(&s);
	return e;
}

/* (b) Eric Dumazet saw splice(len 1000) return 1460 once the fix above
 * let tcp_read_sock() go on past len. */
int probe_live_seed004_b(struct probe_result *r)
{
	struct seed_live s;
	long long low = LLONG_MAX, max = 0, calls = 0;
	int e = seed_open(&s, 256 << 10, PROBE_BIGPIPE, 32, r);

	if (e)
		return e;
	for (; calls < 32; calls++) {
		long long q = net_inq(s.c.srv);
		ssize_t n;

		if (q < low)
			low = q;
		n = splice(s.c.srv, NULL, s.p.wr, NULL, 1000, PROBE_SPLICE);
		if (n == -1) {
			e = probe_res(r, -errno,
				      "splice(socket -> pipe, 1000) "
				      "call %lld: %s",
				      calls + 1, strerror(errno));
			break;
		}
		if (n > max)
			max = n;
		pipe_empty(&s.p); /* so the pipe never limits a call */
	}
	r->val[0] = 1000;
	r->val[1] = max;
	r->val[2] = calls;
	r->val[3] = low;
	if (!e)
		e = probe_res(r, max <= 1000 ? 0 : -EOPNOTSUPP,
			      "%lld calls of splice(socket -> pipe, len 1000) "
			      "with at least %lld bytes queued (MSS %lld): the "
			      "largest returned %lld",
			      calls, low, s.mss, max);
	seed_close(&s);
	return e;
}

/* Empties pipe and socket, then splices once more: an empty socket. */
static int seed_empty_errno(struct seed_live *s)
{
	pipe_empty(&s->p);
	conn_drain(&s->c);
	if (splice(s->c.srv, NULL, s->p.wr, NULL, 65536, PROBE_SPLICE) != -1)
		return 0;
	return errno;
}

/* (c) Willy's question in seed 004: a full pipe and an empty socket both
 * answer EAGAIN, so EAGAIN alone cannot say whether to wait for POLLIN or
 * to drain the pipe first. */
int probe_live_seed004_c(struct probe_result *r)
{
	struct seed_live s;
	ssize_t n = 0;
	int e = seed_open(&s, 512 << 10, 0, 32, r), err, i, readable;

	if (e)
		return e;
	for (i = 0; i < 64 && n != -1; i++)
		n = splice(s.c.srv, NULL, s.p.wr, NULL, 1 << 20, PROBE_SPLICE);
	err = n == -1 ? errno : 0;
	readable = wait_fd(s.c.srv, POLLIN, -1, 0);
	r->val[0] = net_inq(s.p.rd);
	r->val[1] = net_inq(s.c.srv);
	r->val[2] = err;
	if (err != EAGAIN || r->val[1] <= 0)
		e = probe_res(r, err == EAGAIN ? -EAGAIN : -EOPNOTSUPP,
			      "after %d splices into a %u-byte pipe holding "
			      "%lld bytes, with %lld left on the socket: %s",
			      i, s.p.size, r->val[0], r->val[1],
			      err ? strerror(err) : "no error");
	else {
		r->val[3] = seed_empty_errno(&s);
		e = probe_res(
			r, 0,
			"pipe full (%u slots of F_GETPIPE_SZ %u "
			"hold %lld bytes) while the socket held %lld "
			"bytes and polled %s: "
			"splice returned EAGAIN; an empty socket gives %s "
			"- the ambiguity HAProxy lives with: only the "
			"pipe's fill level tells them apart",
			s.p.size / (unsigned int)sysconf(_SC_PAGESIZE),
			s.p.size, r->val[0], r->val[1],
			readable == 1 ? "readable" : "NOT readable",
			r->val[3] == EAGAIN ? "EAGAIN too"
					    : strerror((int)r->val[3]));
	}
	seed_close(&s);
	return e;
}

/* Queues n more bytes, then asks epoll (level-triggered) once. */
static int lowat_step(struct probe_conn *c, int ep, size_t n, int ms,
		      long long *queued)
{
	*queued = conn_queue(c, n);
	return wait_fd(-1, 0, ep, ms);
}

/* (d) Eric Dumazet's wish in seed 004: SO_RCVLOWAT should cut wakeups. It
 * gates poll/epoll readiness (tcp_poll), but splice does not read it as a
 * target: a splice after the wakeup takes whatever is queued. */
int probe_live_seed004_d(struct probe_result *r)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct probe_conn c;
	struct dnd_pipe p;
	long long below = 0, at = 0;
	int lowat = 65536, nb, na, e, ep, serr = 0;
	ssize_t n = -1;

	if ((e = conn_open(&c, PROBE_MSS, PROBE_RCVBUF, r)))
		return e;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep == -1 || (e = pipe_nb(&p, PROBE_BIGPIPE, r))) {
		e = e ? e
		      : probe_res(r, -errno, "epoll_create1: %s",
				  strerror(errno));
		goto out;
	}
	if (setsockopt(c.srv, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)) ==
		    -1 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, c.srv, &ev) == -1) {
		e = probe_res(r, -errno, "SO_RCVLOWAT or epoll_ctl: %s",
			      strerror(errno));
		goto out_pipe;
	}
	nb = lowat_step(&c, ep, (size_t)lowat / 2, 50, &below);
	na = lowat_step(&c, ep, (size_t)lowat, PROBE_WAIT_MS, &at);
	if (na == 1 &&
	    (n = splice(c.srv, NULL, p.wr, NULL, p.size, PROBE_SPLICE)) == -1)
		serr = errno;
	r->val[0] = lowat;
	r->val[1] = nb;
	r->val[2] = na;
	r->val[3] = n;
	if (nb < 0 || na < 0)
		e = probe_res(r, nb < 0 ? nb : na, "epoll_wait: %s",
			      strerror(nb < 0 ? -nb : -na));
	else if (serr)
		e = probe_res(r, -serr,
			      "splice(socket -> pipe) after the wakeup: %s",
			      strerror(serr));
	else
		e = probe_res(
			r, nb == 0 && na == 1 && n > 0 ? 0 : -EOPNOTSUPP,
			"SO_RCVLOWAT %d: with %lld bytes queued epoll said %s; "
			"with %lld, %s; one splice then took %zd bytes (splice "
			"takes what is queued: the mark gates only the wakeup)",
			lowat, below, nb ? "ready (not delayed)" : "not ready",
			at, na == 1 ? "ready" : "still not ready", n);
out_pipe:
	pipe_close(&p);
out:
	if (ep != -1)
		close(ep);
	conn_close(&c);
	return e;
}
