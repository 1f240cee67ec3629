// SPDX-License-Identifier: MIT
/*
 * The live feature checks of `dnd probe`: splice both ways, vmsplice,
 * sendfile, MSG_ZEROCOPY and its completion, TCP_ZEROCOPY_RECEIVE, network
 * namespaces. Each runs on loopback, pipes or a temporary file, bounded.
 */
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
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kernel.h"
#include "core/net.h"
#include "core/net_mptcp.h"
#include "core/pipe.h"
#include "core/zcopy.h"
#include "probe/probe_check.h"
#include "probe/probe_live.h"

int probe_live_splice_sock_pipe(struct probe_result *r)
{
	const size_t len = 65536;
	struct probe_conn c;
	struct dnd_pipe p;
	ssize_t n;
	int e;

	if ((e = probe_conn_open(&c, 0, 0, r)))
		return e;
	if ((e = probe_pipe_nb(&p, 0, r))) {
		probe_conn_close(&c);
		return e;
	}
	probe_conn_queue(&c, len);
	n = splice(c.srv, NULL, p.wr, NULL, len, DND_PROBE_SPLICE);
	if (n == -1)
		e = probe_res(r, -errno, "splice(socket -> pipe): %s",
			      strerror(errno));
	else
		e = probe_read_back(r, p.rd, false, n,
				    "splice(loopback socket -> pipe)");
	r->val[0] = n;
	pipe_close(&p);
	probe_conn_close(&c);
	return e;
}

int probe_live_splice_pipe_file(struct probe_result *r)
{
	unsigned char buf[32768];
	struct dnd_pipe p;
	loff_t off = 0;
	ssize_t n = -1;
	int fd, e;

	if ((fd = probe_tmp_file(r)) < 0)
		return fd;
	if ((e = probe_pipe_nb(&p, 0, r))) {
		close(fd);
		return e;
	}
	probe_pattern_fill(buf, sizeof(buf), 0);
	if (write(p.wr, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		e = probe_res(r, -EIO, "write into a pipe: short or failed");
	else if ((n = splice(p.rd, NULL, fd, &off, sizeof(buf),
			     DND_PROBE_SPLICE)) == -1)
		e = probe_res(r, errno == EINVAL ? -EOPNOTSUPP : -errno,
			      "splice(pipe -> file) in %s: %s%s",
			      getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			      strerror(errno),
			      errno == EINVAL
				      ? " (this file system cannot take splice)"
				      : "");
	else
		e = probe_read_back(r, fd, true, n,
				    "splice(pipe -> temporary file)");
	r->val[0] = n;
	pipe_close(&p);
	close(fd);
	return e;
}

int probe_live_vmsplice(struct probe_result *r)
{
	struct dnd_pipe p;
	struct iovec iov;
	ssize_t n;
	int e;

	iov.iov_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	iov.iov_base = mmap(NULL, iov.iov_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (iov.iov_base == MAP_FAILED)
		return probe_res(r, -ENOMEM, "mmap %zu bytes: %s", iov.iov_len,
				 strerror(errno));
	if (!(e = probe_pipe_nb(&p, 0, r))) {
		probe_pattern_fill(iov.iov_base, iov.iov_len, 0);
		n = vmsplice(p.wr, &iov, 1, SPLICE_F_NONBLOCK);
		if (n == -1)
			e = probe_res(r, -errno, "vmsplice: %s",
				      strerror(errno));
		else
			e = probe_read_back(r, p.rd, false, n,
					    "vmsplice(page-aligned user "
					    "pages -> pipe, by reference)");
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

	if ((fd = probe_tmp_file(r)) < 0)
		return fd;
	probe_pattern_fill(buf, sizeof(buf), 0);
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf)) {
		close(fd);
		return probe_res(r, -EIO, "write a temporary file: %s",
				 strerror(errno));
	}
	if ((e = probe_conn_open(&c, 0, 0, r))) {
		close(fd);
		return e;
	}
	n = sendfile(c.cli, fd, &off, sizeof(buf));
	if (n == -1)
		e = probe_res(r, errno == EINVAL ? -EOPNOTSUPP : -errno,
			      "sendfile(file -> socket): %s", strerror(errno));
	else
		e = probe_read_back(r, c.srv, false, n,
				    "sendfile(temporary file -> loopback "
				    "socket)");
	r->val[0] = n;
	probe_conn_close(&c);
	close(fd);
	return e;
}

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
	long long end = probe_now_ms() + DND_PROBE_WAIT_MS;
	long long done = 0, copied = 0, calls;
	ssize_t w;
	int e = 0;

	if (buf == MAP_FAILED)
		return probe_res(r, -ENOMEM, "mmap: %s", strerror(errno));
	probe_pattern_fill(buf, n, 0);
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
	while (!e && done < calls && probe_now_ms() < end) {
		struct pollfd pfd = { .fd = c->cli, .events = 0 };

		probe_sock_discard(c->srv);
		e = zc_reap(c->cli, &done, &copied);
		if (!e && done < calls)
			poll(&pfd, 1, 5); /* POLLERR: completion queued */
	}
	r->val[1] = w;
	r->val[2] = done;
	r->val[3] = copied;
	if (e)
		probe_res(r, e, "MSG_ZEROCOPY completion (recvmsg "
			  "MSG_ERRQUEUE): %s", strerror(-e));
	else if (!done)
		e = probe_res(r, -ETIMEDOUT,
			      "SO_ZEROCOPY accepted and %zd bytes "
			      "sent, but no completion came back within %d ms",
			      w, DND_PROBE_WAIT_MS);
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

	if ((e = probe_conn_open(&c, 0, 0, r)))
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
	probe_conn_close(&c);
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

	if ((e = probe_conn_open(&c, 0, 0, r)))
		return e;
	/* The receive path maps socket pages into this window. */
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, c.srv, 0);
	if (map == MAP_FAILED) {
		e = probe_res(r, errno == ENODEV ? -ENOSYS : -errno,
			      "mmap of a TCP socket: %s", strerror(errno));
		probe_conn_close(&c);
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
	probe_conn_close(&c);
	return e;
}

/* ---- network namespaces ---- */

int probe_live_netns(struct probe_result *r)
{
	long long end = probe_now_ms() + DND_PROBE_WAIT_MS * 2;
	int st = 0, e;
	pid_t pid = fork(), w = 0;

	if (pid == -1)
		return probe_res(r, -errno, "fork: %s", strerror(errno));
	/* The child tries, so this process keeps its namespace. */
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) == -1 ? (errno & 0x7f) : 0);
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && probe_now_ms() < end)
		poll(NULL, 0, 2);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return probe_res(r, -ETIMEDOUT,
				 "unshare(CLONE_NEWNET) did not return "
				 "within %d ms",
				 DND_PROBE_WAIT_MS * 2);
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

/* ---- MPTCP ---- */

/*
 * An MPTCP connection on loopback (as --mptcp makes them) keeps MPTCP, and
 * the path manager's limits as MPTCP_INFO gives them for it: the kernel's
 * own answer, in this network namespace, with no netlink and no ip(8).
 */
int probe_live_mptcp(struct probe_result *r)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct net_mptcp_limits l;
	char err[320], peer[96], pm[32] = "?";
	int lfd, cli = -1, e;
	uint16_t port = 0;

	kernel_read_ll(NET_MPTCP_ENABLED, &r->val[0]);
	e = net_mptcp_check(err, sizeof(err));
	if (e)
		return probe_res(r, e == -EPROTONOSUPPORT ? -ENOSYS : e, "%s",
				 err);
	if (kernel_read_file("/proc/sys/net/mptcp/path_manager", pm,
			     sizeof(pm)) > 0)
		pm[strcspn(pm, "\n")] = '\0';
	net_use_mptcp(true);
	lfd = net_listen("127.0.0.1", 0, 0, false, err, sizeof(err));
	if (lfd >= 0 && getsockname(lfd, (struct sockaddr *)&ss, &sl) == 0)
		port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (port)
		cli = net_connect("127.0.0.1", port, 0, true, 0, 1, peer,
				  sizeof(peer), err, sizeof(err));
	net_use_mptcp(false);
	if (cli < 0)
		e = probe_res(r, lfd < 0 ? lfd : cli < 0 ? cli : -EIO,
			      "an MPTCP connection on loopback: %s", err);
	else if (!(r->val[1] = net_mptcp_active(cli)))
		e = probe_res(r, -EOPNOTSUPP, "an MPTCP connection on loopback "
			      "fell back to plain TCP (TCP_IS_MPTCP 0)");
	else if ((e = net_mptcp_limits(cli, &l)))
		e = probe_res(r, e, "getsockopt(MPTCP_INFO): %s",
			      strerror(-e));
	else {
		r->val[2] = l.subflows_max;
		r->val[3] = l.add_addr_accepted_max;
		e = probe_res(r, 0, "a loopback connection kept MPTCP; path "
			      "manager %s, its limits (MPTCP_INFO): subflow "
			      "%u, add_addr_accepted %u, signal endpoints %u",
			      pm, l.subflows_max, l.add_addr_accepted_max,
			      l.add_addr_signal_max);
	}
	if (cli >= 0)
		close(cli);
	if (lfd >= 0)
		close(lfd);
	return e;
}
