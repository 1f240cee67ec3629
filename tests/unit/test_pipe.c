// SPDX-License-Identifier: MIT
/*
 * Pipes and the relay's pipe pool: the size the kernel gives, and a pool
 * that never hands out a pipe with someone else's bytes in it.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/pipe.h"

static unsigned int page;

/* What F_SETPIPE_SZ gives for want: a power-of-two number of pages. */
static unsigned int t_round(unsigned int want)
{
	unsigned int pages = (want + page - 1) / page, n = 1;

	while (n < pages)
		n <<= 1;
	return n * page;
}

/*
 * The lowest free descriptor: a pipe takes the lowest ones, so a pipe left
 * open moves it.
 */
static int t_next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd != -1)
		close(fd);
	return fd;
}

static int t_inq(const struct dnd_pipe *p)
{
	int n = -1;

	return ioctl(p->rd, FIONREAD, &n) == -1 ? -1 : n;
}

static bool t_is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

static void t_open_size(unsigned int want)
{
	struct dnd_pipe p;
	int r = pipe_open(&p, want);

	if (r == -EPERM && want <= pipe_max_size()) {
		/* Past fs.pipe-user-pages-soft: the user's pipes are many. */
		printf("# size %u: EPERM from the per-user pipe limit\n", want);
		return;
	}
	CHECK(r == 0 && p.size == t_round(want) &&
	      fcntl(p.wr, F_GETPIPE_SZ) == (int)p.size,
	      "want %u: size %u (expected %u)", want, p.size, t_round(want));
	pipe_close(&p);
}

static void t_open(void)
{
	unsigned int max = pipe_max_size();
	struct dnd_pipe p;
	int r;

	CHECK(pipe_open(&p, 0) == 0 && p.size >= page &&
	      fcntl(p.wr, F_GETPIPE_SZ) == (int)p.size &&
	      (fcntl(p.rd, F_GETFD) & FD_CLOEXEC) &&
	      (fcntl(p.wr, F_GETFD) & FD_CLOEXEC),
	      "default pipe: size %u, both ends O_CLOEXEC", p.size);
	CHECK(write(p.wr, "ab", 2) == 2 && t_inq(&p) == 2,
	      "wr feeds rd");
	pipe_close(&p);
	CHECK(p.rd == -1 && p.wr == -1, "closed ends are -1");
	pipe_close(&p);
	t_open_size(1);
	t_open_size(page);
	t_open_size(3 * page + 1);
	t_open_size(1u << 20);
	CHECK(max >= page && t_round(max) == max,
	      "pipe-max-size %u is a power-of-two number of pages", max);
	if (!max)
		return;
	t_open_size(max);
	/* Past the limit: refused, unless we hold CAP_SYS_RESOURCE. */
	r = pipe_open(&p, max + 1);
	CHECK((r == -EPERM && p.rd == -1 && p.wr == -1 && p.size == 0) ||
	      (r == 0 && p.size == 2 * max),
	      "want pipe-max-size + 1: %d, size %u", r, p.size);
	pipe_close(&p);
}

/* The pool's counters and its bound. */
static void t_pool_counts(void)
{
	struct dnd_pipe *a, *b, *c, *d;
	struct pipe_pool pp;
	int fds = t_next_fd();

	CHECK(pipe_pool_init(&pp, 3, 4 * page) == 0 && pp.max == 3 &&
	      pp.used == 0 && pp.nfree == 0, "init");
	CHECK(pipe_get(&pp, &a) == 0 && pipe_get(&pp, &b) == 0 &&
	      pipe_get(&pp, &c) == 0 && a != b && b != c && a != c,
	      "three distinct pipes");
	CHECK(a->size == 4 * page && pp.min_size == 4 * page &&
	      pp.created == 3 && pp.used == 3 && pp.peak == 3,
	      "size %u, created %llu, used %u, peak %u", a->size, pp.created,
	      pp.used, pp.peak);
	d = a;
	CHECK(pipe_get(&pp, &d) == -ENOBUFS && !d && pp.failed == 0 &&
	      pp.used == 3, "at max: -ENOBUFS, out NULL, not a failure");
	pipe_put(&pp, b, 0);
	CHECK(pp.used == 2 && pp.nfree == 1 && t_is_open(b->rd),
	      "empty put is pooled, still open");
	CHECK(pipe_get(&pp, &d) == 0 && d == b && pp.created == 3 &&
	      pp.used == 3 && pp.peak == 3, "get reuses the pooled pipe");
	pipe_kill(&pp, d);
	CHECK(pp.used == 2 && pp.killed == 1 && pp.nfree == 0, "kill counts");
	pipe_put(&pp, a, 0);
	pipe_put(&pp, c, 0);
	CHECK(pp.used == 0 && pp.nfree == 2 && pp.peak == 3, "all back");
	pipe_pool_free(&pp);
	CHECK(t_next_fd() == fds && !pp.free, "free closes the pooled pipes");

	CHECK(pipe_pool_init(&pp, 0, 0) == 0 && pipe_get(&pp, &a) == -ENOBUFS &&
	      !a, "max 0: nothing to hand out");
	pipe_pool_free(&pp);
}

/* A pipe put back with bytes inside is killed; what comes next is empty. */
static void t_pool_dirty(void)
{
	struct dnd_pipe *a, *b, *c, *d;
	struct pipe_pool pp;
	int rd, wr, fds = t_next_fd();

	pipe_pool_init(&pp, 4, 0);
	if (pipe_get(&pp, &a) || pipe_get(&pp, &b) ||
	    write(a->wr, "stale", 5) != 5 || write(b->wr, "old", 3) != 3 ||
	    read(b->rd, (char[3]){ 0 }, 3) != 3) {
		CHECK(0, "set-up: two pipes, one with 5 bytes inside");
		return;
	}
	rd = a->rd;
	wr = a->wr;
	pipe_put(&pp, b, 0);
	pipe_put(&pp, a, 5);
	CHECK(pp.killed == 1 && pp.used == 0 && pp.nfree == 1 &&
	      !t_is_open(rd) && !t_is_open(wr),
	      "put holding 5 bytes: killed, both ends closed");
	CHECK(pipe_get(&pp, &c) == 0 && t_inq(c) == 0,
	      "next pipe handed out is empty");
	CHECK(pipe_get(&pp, &d) == 0 && t_inq(d) == 0 && pp.created == 3,
	      "and the one after (a new one) too");
	/*
	 * pipe_put() trusts held: a caller that says 0 with bytes inside gets
	 * the pipe pooled (the relay passes its own count, d->count).
	 */
	pipe_put(&pp, c, 0);
	pipe_put(&pp, d, 0);
	pipe_pool_free(&pp);
	CHECK(t_next_fd() == fds, "no fd left behind");
}

/* Without a free descriptor the pool counts a failure and hands nothing. */
static void t_pool_emfile(void)
{
	struct dnd_pipe dummy, *a = &dummy;
	struct pipe_pool pp;
	struct rlimit rl, low;
	int fd = t_next_fd(), r;

	if (fd == -1 || getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		CHECK(0, "set-up: /dev/null and RLIMIT_NOFILE");
		return;
	}
	/* Exactly one free slot (fd): pipe2() needs two. */
	low = rl;
	low.rlim_cur = (rlim_t)fd + 1;
	pipe_pool_init(&pp, 4, 0);
	setrlimit(RLIMIT_NOFILE, &low);
	r = pipe_get(&pp, &a);
	setrlimit(RLIMIT_NOFILE, &rl);
	CHECK(r == -EMFILE && !a && pp.failed == 1 && pp.used == 0 &&
	      pp.created == 0, "EMFILE: %d, failed %llu", r, pp.failed);
	pipe_pool_free(&pp);
}

/* In a child without CAP_SYS_RESOURCE: bits of what went wrong, 77 skip. */
static int t_shrunk_child(unsigned int max)
{
	struct dnd_pipe *a = NULL, plain;
	struct pipe_pool pp;
	int r = 0;

	if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
		return 77;
	if (pipe_open(&plain, 2 * max) == 0)
		return 77;		/* still privileged */
	if (pipe_open(&plain, 0))
		return 64;
	pipe_pool_init(&pp, 2, 2 * max);
	if (pipe_get(&pp, &a))
		return 32;
	r |= pp.shrunk == 1 ? 0 : 1;
	r |= a->size == plain.size ? 0 : 2;
	r |= pp.min_size == plain.size ? 0 : 4;
	r |= pp.created == 1 && pp.failed == 0 ? 0 : 8;
	pipe_kill(&pp, a);
	pipe_pool_free(&pp);
	pipe_close(&plain);
	return r;
}

/* A size the kernel refuses (EPERM) falls back to the default, counted. */
static void t_pool_shrunk(void)
{
	unsigned int max = pipe_max_size();
	int st = 0;
	pid_t pid;

	if (!max) {
		printf("# skip shrunk: no /proc/sys/fs/pipe-max-size\n");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(t_shrunk_child(max));
	if (pid == -1 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		CHECK(0, "shrunk child did not exit");
		return;
	}
	if (WEXITSTATUS(st) == 77) {
		printf("# skip shrunk: cannot drop CAP_SYS_RESOURCE\n");
		return;
	}
	CHECK(WEXITSTATUS(st) == 0,
	      "EPERM: default size, shrunk 1 (child bits %#x)",
	      WEXITSTATUS(st));
}

int main(void)
{
	int fds = t_next_fd();

	alarm(30);
	page = (unsigned int)sysconf(_SC_PAGESIZE);
	t_open();
	t_pool_counts();
	t_pool_dirty();
	t_pool_emfile();
	t_pool_shrunk();
	CHECK(t_next_fd() == fds, "no fd leaked over the whole run");
	return CHECK_DONE();
}
