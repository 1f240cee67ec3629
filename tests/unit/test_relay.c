// SPDX-License-Identifier: MIT
/*
 * The relay under faults a load generator does not make: urgent (MSG_OOB)
 * data, a target that resets after sending, a client that resets while idle,
 * and a failure of the relay itself (an fd it cannot write to).
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"
#include "core/net.h"
#include "core/pipe.h"
#include "core/stats.h"
#include "relay/evloop.h"
#include "relay/relay.h"
#include "relay/relay_flow.h"
#include "relay/relay_pump.h"

#define T_WAIT_MS 5000		/* bound on every wait in here */
#define T_RESET_BYTES (1u << 20)
#define T_STATS_HEAD "{\"schema\":1,\"type\":\"relay_stats\","

/* flags: SOCK_NONBLOCK for the relay's listener (it accepts in a loop). */
static int t_listen(uint16_t *port, int flags)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		perror("listen");
		exit(1);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int t_connect(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		exit(1);
	}
	return fd;
}

static int t_accept(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, T_WAIT_MS) != 1)
		return -1;
	return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/*
 * Reads until EOF, an error or T_WAIT_MS of silence. Returns the bytes;
 * *err is 0 at EOF, the errno, or ETIMEDOUT.
 */
static size_t t_read_all(int fd, char *buf, size_t cap, int *err)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	ssize_t n;

	for (;;) {
		if (poll(&p, 1, T_WAIT_MS) != 1) {
			*err = ETIMEDOUT;
			return got;
		}
		n = recv(fd, buf + got, cap - got, 0);
		if (n <= 0) {
			*err = n == 0 ? 0 : errno;
			return got;
		}
		got += (size_t)n;
		if (got == cap) {
			*err = ENOSPC;
			return got;
		}
	}
}

static void t_fill(char *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (char)((i * 131 + seed) >> 3);
}

static void t_send_all(int fd, const char *buf, size_t len, int flags)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, flags | MSG_NOSIGNAL);
		if (n <= 0) {
			perror("send");
			exit(1);
		}
		buf += n;
		len -= (size_t)n;
	}
}

/* The relay in a child process; its JSON stats come back through *statfd. */
static pid_t t_relay(enum relay_mode mode, uint16_t tport, uint16_t *rport,
		     int *statfd)
{
	struct relay_opts o;
	struct relay_stats st;
	int lfd = t_listen(rport, SOCK_NONBLOCK), pfd[2];
	pid_t pid;

	if (pipe(pfd)) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* A test killed by its timeout must not leave a relay behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		relay_defaults(&o);
		o.listen_fd = lfd;
		o.target_host = "127.0.0.1";
		o.target_port = tport;
		o.mode = mode;
		o.grace = 0.5;
		o.json = true;
		o.out = fdopen(pfd[1], "w");
		relay_run(&o, &st);
		relay_stats_print(&o, &st, o.out);
		_exit(0);
	}
	close(pfd[1]);
	close(lfd);
	*statfd = pfd[0];
	return pid;
}

/* Stops the relay; returns its last stats line in buf (or ""). */
static void t_relay_stop(pid_t pid, int statfd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;
	int i, status;

	kill(pid, SIGTERM);
	for (i = 0; i < 500 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (i == 500) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	while (got + 1 < cap &&
	       (n = read(statfd, buf + got, cap - got - 1)) > 0)
		got += (size_t)n;
	while (got && buf[got - 1] == '\n')
		got--;
	buf[got] = 0;
	close(statfd);
}

static unsigned long long t_num(const char *json, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? strtoull(p + strlen(k), NULL, 10) : ~0ULL;
}

/* Urgent data mid-stream: every byte arrives, in order, and the flow ends
 * with a FIN (splice stops at the urgent mark; the relay must get past). */
static void t_oob(enum relay_mode mode, const char *name)
{
	static char out[131073], in[131073 + 16];
	char stats[4096];
	uint16_t tport, rport;
	int tl = t_listen(&tport, 0), statfd, c, t, err;
	pid_t pid = t_relay(mode, tport, &rport, &statfd);
	size_t got;

	t_fill(out, sizeof(out), 7);
	c = t_connect(rport);
	t = t_accept(tl);
	CHECK(t >= 0, "%s oob: the relay connected to the target", name);
	if (t < 0)
		exit(1);
	t_send_all(c, out, 65536, 0);
	t_send_all(c, out + 65536, 1, MSG_OOB);
	usleep(20000);	/* the urgent mark reaches the relay before the rest */
	t_send_all(c, out + 65537, sizeof(out) - 65537, 0);
	shutdown(c, SHUT_WR);
	got = t_read_all(t, in, sizeof(in), &err);
	CHECK(got == sizeof(out) && err == 0 && !memcmp(in, out, got),
	      "%s oob: target got %zu of %zu bytes, then %s", name, got,
	      sizeof(out), err ? strerror(err) : "EOF");
	close(t);
	got = t_read_all(c, in, sizeof(in), &err);
	CHECK(got == 0 && err == 0, "%s oob: the client sees the FIN", name);
	close(c);
	close(tl);
	t_relay_stop(pid, statfd, stats, sizeof(stats));
	CHECK(t_num(stats, "completed") == 1 && t_num(stats, "resets") == 0 &&
	      t_num(stats, "errors") == 0 &&
	      t_num(stats, "client_to_target_bytes") == sizeof(out),
	      "%s oob: relay stats: %s", name, stats);
	CHECK(!strncmp(stats, T_STATS_HEAD, strlen(T_STATS_HEAD)),
	      "%s oob: the stats line starts with schema 1, type relay_stats",
	      name);
	if (mode == DND_RELAY_SPLICE)
		CHECK(t_num(stats, "urgent_copies") >= 1 &&
		      t_num(stats, "splice_in_calls") >= 2,
		      "splice oob: copied past the mark, spliced the rest");
}

/*
 * The target sends T_RESET_BYTES, waits until the relay has them all
 * (SIOCOUTQ 0), then resets. Only then does the client read: it must get
 * every byte, then the reset (not a FIN).
 */
static void t_target_reset(enum relay_mode mode, const char *name)
{
	static char out[T_RESET_BYTES], in[T_RESET_BYTES + 16];
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char stats[4096];
	uint16_t tport, rport;
	int tl = t_listen(&tport, 0), statfd, c, t, err, q, i, status;
	pid_t pid = t_relay(mode, tport, &rport, &statfd), tp;
	size_t got;

	t_fill(out, sizeof(out), 3);
	c = t_connect(rport);
	fflush(stdout);
	tp = fork();
	if (tp == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		t = t_accept(tl);
		if (t < 0)
			_exit(1);
		t_send_all(t, out, sizeof(out), 0);
		for (i = 0; i < T_WAIT_MS; i++) {
			if (ioctl(t, SIOCOUTQ, &q) || q == 0)
				break;
			usleep(1000);
		}
		setsockopt(t, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(t);
		_exit(i < T_WAIT_MS ? 0 : 2);
	}
	waitpid(tp, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s target reset: the relay took all %zu bytes before the reset",
	      name, sizeof(out));
	got = t_read_all(c, in, sizeof(in), &err);
	CHECK(got == sizeof(out) && !memcmp(in, out, got) &&
	      err == ECONNRESET, "%s target reset: client got %zu of %zu "
	      "bytes, then %s", name, got, sizeof(out),
	      err ? strerror(err) : "EOF");
	close(c);
	close(tl);
	t_relay_stop(pid, statfd, stats, sizeof(stats));
	CHECK(t_num(stats, "completed") == 0 && t_num(stats, "resets") == 1 &&
	      t_num(stats, "target_to_client_bytes") == sizeof(out) &&
	      t_num(stats, "discarded_bytes") == 0,
	      "%s target reset: relay stats: %s", name, stats);
}

/*
 * The client sends, shuts down its side, then resets while the relay has
 * nothing to send it: the relay must still see the reset and pass it on.
 */
static void t_idle_reset(void)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	char stats[4096], in[64];
	uint16_t tport, rport;
	int tl = t_listen(&tport, 0), statfd, c, t, err;
	pid_t pid = t_relay(DND_RELAY_SPLICE, tport, &rport, &statfd);
	struct pollfd p;
	socklen_t len = sizeof(err);
	size_t got;

	c = t_connect(rport);
	t = t_accept(tl);
	CHECK(t >= 0, "idle reset: the relay connected to the target");
	if (t < 0)
		exit(1);
	t_send_all(c, "x", 1, 0);
	shutdown(c, SHUT_WR);
	got = t_read_all(t, in, sizeof(in), &err);
	CHECK(got == 1 && err == 0, "idle reset: target got the byte and FIN");
	usleep(50000);	/* the relay is idle on the client socket now */
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);
	/* After the FIN, recv() says 0 for ever: the reset shows as a hangup
	 * with SO_ERROR set. */
	p.fd = t;
	p.events = 0;
	err = 0;
	if (poll(&p, 1, T_WAIT_MS) == 1)
		getsockopt(t, SOL_SOCKET, SO_ERROR, &err, &len);
	/* EPIPE: a reset in CLOSE_WAIT [tcp_reset()]. */
	CHECK(err == ECONNRESET || err == EPIPE,
	      "idle reset: the target learns of the client's reset: %s",
	      err ? strerror(err) : "nothing");
	close(t);
	close(tl);
	t_relay_stop(pid, statfd, stats, sizeof(stats));
	CHECK(t_num(stats, "completed") == 0 && t_num(stats, "resets") == 1 &&
	      t_num(stats, "active") == 0 && t_num(stats, "grace_closed") == 0,
	      "idle reset: the flow was closed, not leaked: %s", stats);
}

/*
 * A flow whose target is an fd the relay cannot write to (/dev/null opened
 * read-only: send() says ENOTSOCK, splice() EBADF). relay_pump() must
 * return that error, and the flow must end as a relay error: the client,
 * whose bytes were not delivered, gets a reset, the bytes count as
 * discarded, not delivered.
 */
static void t_pump_error(enum relay_mode mode, const char *name, int want)
{
	struct relay_opts o;
	struct relay_stats st;
	struct relay_shared sh;
	struct relay r;
	struct relay_flow *f = calloc(1, sizeof(*f));
	uint16_t port;
	int lfd = t_listen(&port, 0), c = t_connect(port), a = t_accept(lfd);
	int t = open("/dev/null", O_RDONLY | O_CLOEXEC), e, err = 0, i;
	char buf[16];
	size_t got;

	relay_defaults(&o);
	o.mode = mode;
	memset(&st, 0, sizeof(st));
	memset(&sh, 0, sizeof(sh));
	memset(&r, 0, sizeof(r));
	sh.o = &o;
	sh.mode = mode;
	sh.n = 1;
	sh.lfd = -1;
	atomic_store(&sh.active, 1);
	r.o = &o;
	r.sh = &sh;
	r.st = &st;
	r.lfd = r.sfd = r.evfd = -1;
	r.paused = r.draining = true;	/* no listener to resume */
	r.budget = 256 * 1024;
	if (!f || a < 0 || t < 0 || net_nonblock(a) ||
	    evloop_init(&r.el, 1024, 16) || pipe_pool_init(&r.pool, 4, 0)) {
		perror("setup");
		exit(1);
	}
	f->r = &r;
	f->fd[0] = a;
	f->fd[1] = t;
	f->dir[0].rd_ready = true;
	r.nflows = 1;
	st.active = 1;
	relay_list_add(&r.open, f);
	t_send_all(c, "hello", 5, 0);
	for (i = 0; i < T_WAIT_MS && net_inq(a) < 5; i++)
		usleep(1000);
	e = relay_pump(&r, f, 0);
	CHECK(e == -want, "%s relay error: relay_pump returns %d (%s): %d",
	      name, -want, strerror(want), e);
	relay_flow_after(&r, f, e);
	CHECK(st.errors == 1 && st.resets == 0 && st.active == 0 &&
	      atomic_load(&sh.active) == 0 &&
	      r.nflows == 0 && st.bytes[0] == 0 && st.bytes_discarded == 5,
	      "%s relay error: counted as an error (%llu), 5 bytes discarded "
	      "(%llu), none delivered", name, (unsigned long long)st.errors,
	      (unsigned long long)st.bytes_discarded);
	got = t_read_all(c, buf, sizeof(buf), &err);
	CHECK(got == 0 && err == ECONNRESET,
	      "%s relay error: the client gets a reset, not a FIN: %s", name,
	      err ? strerror(err) : "EOF");
	close(c);
	close(lfd);
	pipe_pool_free(&r.pool);
	relay_bufs_free(&r);
	evloop_free(&r.el);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	t_oob(DND_RELAY_SPLICE, "splice");
	t_oob(DND_RELAY_RW, "rw");
	t_target_reset(DND_RELAY_SPLICE, "splice");
	t_target_reset(DND_RELAY_RW, "rw");
	t_idle_reset();
	t_pump_error(DND_RELAY_SPLICE, "splice", EBADF);
	t_pump_error(DND_RELAY_RW, "rw", ENOTSOCK);
	return CHECK_DONE();
}
