// SPDX-License-Identifier: MIT
/* Socket queue ioctls: net_inq, net_outq and net_at_mark on loopback TCP. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/net.h"

#define T_WAIT_MS 2000

static int t_pair(int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*cli = *srv = -1;
	if (lfd == -1 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 1) || getsockname(lfd, (struct sockaddr *)&a, &al))
		return -1;
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*cli != -1 && !connect(*cli, (struct sockaddr *)&a, sizeof(a)))
		*srv = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	return *srv == -1 ? -1 : 0;
}

/* Waits until fn(fd) == want; returns the last value seen. */
static int t_until(int (*fn)(int), int fd, int want)
{
	int i, v = fn(fd);

	for (i = 0; i < T_WAIT_MS && v != want; i++) {
		poll(NULL, 0, 1);
		v = fn(fd);
	}
	return v;
}

/* Which hosts a keyless client may reach without --insecure. */
static void test_host_loopback(void)
{
	char err[160];

	CHECK(net_host_loopback("127.0.0.1", err, sizeof(err)) == 1 &&
	      net_host_loopback("127.1.2.3", err, sizeof(err)) == 1 &&
	      net_host_loopback("::1", err, sizeof(err)) == 1 &&
	      net_host_loopback("::ffff:127.0.0.1", err, sizeof(err)) == 1,
	      "127/8, ::1 and ::ffff:127.0.0.1 are loopback");
	CHECK(net_host_loopback("10.0.0.1", err, sizeof(err)) == 0 &&
	      net_host_loopback("::ffff:10.0.0.1", err, sizeof(err)) == 0 &&
	      net_host_loopback("2001:db8::1", err, sizeof(err)) == 0 &&
	      net_host_loopback("0.0.0.0", err, sizeof(err)) == 0,
	      "10.0.0.1, ::ffff:10.0.0.1, 2001:db8::1, 0.0.0.0 are not");
	CHECK(net_host_loopback("no such host.invalid", err, sizeof(err)) < 0 &&
	      strstr(err, "cannot resolve 'no such host.invalid'"),
	      "a name that does not resolve: an error, not a verdict: %s", err);
}

/* -C and --rate on a socket: reno is built into every kernel; a name no
 * kernel has is refused with the list; a pacing rate reads back. */
static void test_congestion_pace(int fd)
{
	static const char unknown[] = "congestion control 'nosuchcc' is not "
				      "available; use one of: ";
	char why[320], name[24];
	unsigned long got = 0;
	socklen_t l = sizeof(got);

	CHECK(net_congestion_check("reno", why, sizeof(why)) == 0,
	      "-C reno is available");
	CHECK(net_congestion(fd, "reno") == 0, "TCP_CONGESTION reno");
	net_congestion_get(fd, name, sizeof(name));
	CHECK(!strcmp(name, "reno"), "reads back reno (got '%s')", name);
	CHECK(net_congestion_check("nosuchcc", why, sizeof(why)) == -ENOENT &&
	      !strncmp(why, unknown, sizeof(unknown) - 1) &&
	      strstr(why, "reno"),
	      "an unknown name: the list in the message (%s)", why);
	CHECK(net_congestion_check("a-name-longer-than-16", why,
				   sizeof(why)) == -ENOENT,
	      "a name longer than the kernel's: unknown");
	CHECK(net_pace(fd, 0) == 0, "--rate 0 leaves the socket alone");
	CHECK(net_pace(fd, 200000000) == 0 &&
	      getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &got, &l) == 0 &&
	      got == 200000000, "SO_MAX_PACING_RATE reads back 200 MB/s");
}

int main(void)
{
	struct pollfd pfd = { .events = POLLPRI };
	char buf[1000] = { 0 }, b;
	int cli, srv, p[2];

	test_host_loopback();
	if (t_pair(&cli, &srv)) {
		printf("# no loopback TCP: %s\n", strerror(errno));
		return DND_T_SKIP;
	}
	CHECK(net_inq(srv) == 0 && net_outq(cli) == 0 && net_at_mark(srv) == 0,
	      "a new connection: both queues empty, no urgent mark");
	CHECK(send(cli, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf),
	      "send 1000 bytes");
	CHECK(t_until(net_inq, srv, 1000) == 1000,
	      "the receiver's queue holds the 1000 bytes");
	CHECK(t_until(net_outq, cli, 0) == 0,
	      "the sender's queue empties once they are acknowledged");
	b = 'u';
	CHECK(send(cli, &b, 1, MSG_OOB) == 1, "send one urgent byte");
	/* POLLPRI: the urgent pointer has arrived. */
	pfd.fd = srv;
	CHECK(poll(&pfd, 1, T_WAIT_MS) == 1, "the urgent byte arrived");
	CHECK(net_at_mark(srv) == 0, "1000 bytes before the urgent mark");
	CHECK(recv(srv, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) &&
	      net_at_mark(srv) == 1, "after reading them, at the mark");
	test_congestion_pace(cli);
	CHECK(net_inq(-1) == -EBADF && net_outq(-1) == -EBADF &&
	      net_at_mark(-1) == -EBADF, "a bad fd: -EBADF");
	if (pipe2(p, O_CLOEXEC) == 0) {
		CHECK(write(p[1], "abc", 3) == 3 && net_inq(p[0]) == 3,
		      "net_inq counts a pipe's bytes too (FIONREAD)");
		close(p[0]);
		close(p[1]);
	}
	close(cli);
	close(srv);
	return CHECK_DONE();
}
