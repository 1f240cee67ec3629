// SPDX-License-Identifier: MIT
/*
 * The relay's epoll loop on pipes and socketpairs: interest changes, which
 * callbacks run, removal from inside a callback, exclusive wakeups, the fd
 * table's bound.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/stats.h"
#include "relay/evloop.h"

#define T_WAIT_MS 2000		/* bound on every wait in here */

/* What the callbacks of one fd saw. */
struct t_rec {
	int rd, wr, both;	/* calls of t_on_read, t_on_write, t_on_both */
	unsigned int last;	/* fired bits of the last call */
	int kill;		/* fd to evloop_del(); -1: none */
	int drain;		/* fd to read a byte from; -2: it failed */
};

static void t_rec_init(struct t_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->kill = r->drain = -1;
}

static void t_act(struct evloop *el, struct t_rec *r, unsigned int fired)
{
	char c;

	r->last = fired;
	if (r->drain != -1 && read(r->drain, &c, 1) != 1)
		r->drain = -2;
	if (r->kill != -1)
		evloop_del(el, r->kill);
}

static void t_on_read(struct evloop *el, int fd, void *data,
		      unsigned int fired)
{
	struct t_rec *r = data;

	r->rd++;
	t_act(el, r, fired);
}

static void t_on_write(struct evloop *el, int fd, void *data,
		       unsigned int fired)
{
	struct t_rec *r = data;

	r->wr++;
	t_act(el, r, fired);
}

static void t_on_both(struct evloop *el, int fd, void *data,
		      unsigned int fired)
{
	struct t_rec *r = data;

	r->both++;
	t_act(el, r, fired);
}

static void t_pipe(int p[2], bool fill)
{
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (fill && write(p[1], "x", 1) != 1)) {
		perror("pipe");
		exit(DND_T_FAIL);
	}
}

static void t_close2(int p[2])
{
	close(p[0]);
	close(p[1]);
}

static void t_init_args(void)
{
	struct evloop el;

	CHECK(evloop_init(&el, 0, 8) == -EINVAL, "setsize 0 refused");
	evloop_free(&el);
	CHECK(evloop_init(&el, 8, 0) == -EINVAL, "maxevents 0 refused");
	evloop_free(&el);
	CHECK(evloop_init(&el, 64, 8) == 0 && el.epfd >= 0, "init");
	evloop_free(&el);
	evloop_free(&el);
	CHECK(el.epfd == -1 && !el.files, "free twice is safe");
}

/* Interest on, off, changed; epoll_ctl only when the mask changes. */
static void t_interest(void)
{
	struct evloop el;
	struct t_rec r;
	uint64_t ctl;
	int p[2];

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	t_pipe(p, false);
	CHECK(evloop_set(&el, p[0], DND_EV_READ, t_on_read, NULL, &r) == 0 &&
	      evloop_mask(&el, p[0]) == DND_EV_READ, "read interest");
	ctl = el.ctl_calls;
	CHECK(evloop_set(&el, p[0], DND_EV_READ, NULL, NULL, NULL) == 0 &&
	      el.ctl_calls == ctl, "same mask: no epoll_ctl");
	CHECK(evloop_poll(&el, 0) == 0 && r.rd == 0, "empty pipe: no call");
	if (write(p[1], "x", 1) != 1)
		exit(DND_T_FAIL);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1 &&
	      (r.last & DND_EV_READ), "readable: read callback, bits %#x",
	      r.last);
	CHECK(evloop_poll(&el, 0) == 1 && r.rd == 2,
	      "level-triggered: undrained fd fires again");
	CHECK(evloop_set(&el, p[0], 0, NULL, NULL, NULL) == 0 &&
	      el.ctl_calls == ctl + 1 && evloop_mask(&el, p[0]) == 0,
	      "mask 0 takes fd out of epoll");
	CHECK(evloop_poll(&el, 0) == 0 && r.rd == 2,
	      "no interest: no call although readable");
	CHECK(evloop_set(&el, p[1], DND_EV_WRITE, NULL, t_on_write, &r) == 0 &&
	      evloop_poll(&el, T_WAIT_MS) == 1 && r.wr == 1 && r.rd == 2 &&
	      (r.last & DND_EV_WRITE), "writable: write callback only");
	CHECK(evloop_set(&el, p[1], DND_EV_READ | DND_EV_WRITE, NULL, NULL,
			 NULL) == 0 && evloop_poll(&el, 0) == 1 && r.wr == 2 &&
	      r.rd == 2, "read interest on a write end: only writes fire");
	CHECK(evloop_set(&el, p[1], DND_EV_READ, NULL, NULL, NULL) == 0 &&
	      evloop_poll(&el, 0) == 0 && r.wr == 2,
	      "write interest removed, read kept: nothing fires");
	evloop_del(&el, p[1]);
	CHECK(evloop_mask(&el, p[1]) == 0 && !el.files[p[1]].rfn &&
	      !el.files[p[1]].data, "del forgets callbacks and data");
	t_close2(p);
	evloop_free(&el);
}

/* NULL callbacks and data keep what the fd had; one call for rfn == wfn. */
static void t_callbacks(void)
{
	struct t_rec r, q;
	struct evloop el;
	int s[2];

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	t_rec_init(&q);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == -1 ||
	    write(s[1], "x", 1) != 1)
		exit(DND_T_FAIL);
	evloop_set(&el, s[0], DND_EV_READ, t_on_read, NULL, &r);
	evloop_set(&el, s[0], DND_EV_READ | DND_EV_WRITE, NULL, t_on_write,
		   NULL);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1 && r.wr == 1,
	      "NULL rfn/data kept: both callbacks with the first data");
	evloop_set(&el, s[0], DND_EV_READ | DND_EV_WRITE, t_on_both, t_on_both,
		   &q);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && q.both == 1 &&
	      (q.last & (DND_EV_READ | DND_EV_WRITE)) ==
	      (DND_EV_READ | DND_EV_WRITE) && r.rd == 1,
	      "rfn == wfn: one call with both bits (%#x)", q.last);
	t_close2(s);
	evloop_free(&el);
}

/* A callback that removes its own fd: the write callback does not run. */
static void t_del_self(void)
{
	struct evloop el;
	struct t_rec r;
	int s[2];

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == -1 ||
	    write(s[1], "x", 1) != 1)
		exit(DND_T_FAIL);
	r.kill = s[0];
	evloop_set(&el, s[0], DND_EV_READ | DND_EV_WRITE, t_on_read,
		   t_on_write, &r);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1 && r.wr == 0,
	      "removed in its read callback: no write callback");
	CHECK(evloop_mask(&el, s[0]) == 0 && evloop_poll(&el, 0) == 0 &&
	      r.rd == 1, "removed: never fires again although ready");
	t_close2(s);
	evloop_free(&el);
}

/*
 * Two fds ready in one batch, each removing the other: whichever epoll
 * reports first runs, the other must not (its entry is gone).
 */
static void t_del_other(bool write_side)
{
	struct t_rec ra, rb;
	struct evloop el;
	int a[2], b[2], fa, fb;
	unsigned int mb = write_side ? DND_EV_WRITE : DND_EV_READ;

	evloop_init(&el, 64, 8);
	t_rec_init(&ra);
	t_rec_init(&rb);
	t_pipe(a, true);
	t_pipe(b, true);
	fa = a[0];
	fb = write_side ? b[1] : b[0];
	ra.kill = fb;
	rb.kill = fa;
	evloop_set(&el, fa, DND_EV_READ, t_on_read, NULL, &ra);
	evloop_set(&el, fb, mb, t_on_read, t_on_write, &rb);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 2 &&
	      ra.rd + rb.rd + rb.wr == 1,
	      "%s: two events, one callback (a %d, b %d+%d)",
	      write_side ? "read kills write" : "read kills read", ra.rd,
	      rb.rd, rb.wr);
	/* The one that ran stays; its victim is out of epoll for good. */
	CHECK(!evloop_mask(&el, fa) != !evloop_mask(&el, fb) &&
	      evloop_poll(&el, 0) == 1 && evloop_poll(&el, 0) == 1 &&
	      (ra.rd == 3) != (rb.rd + rb.wr == 3) &&
	      ra.rd + rb.rd + rb.wr == 3, "victim never fires afterwards");
	t_close2(a);
	t_close2(b);
	evloop_free(&el);
}

/* mask DND_EV_ERR: data does not wake it, a hangup goes to the read side. */
static void t_err_only(void)
{
	struct evloop el;
	struct t_rec r;
	int p[2];

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	t_pipe(p, true);
	CHECK(evloop_set(&el, p[0], DND_EV_ERR, t_on_read, t_on_write, &r) ==
	      0 && evloop_mask(&el, p[0]) == DND_EV_ERR,
	      "errors-only interest");
	CHECK(evloop_poll(&el, 0) == 0 && r.rd == 0,
	      "errors only: readable data does not fire");
	close(p[1]);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1 && r.wr == 0 &&
	      (r.last & DND_EV_ERR),
	      "hangup: read callback only, with DND_EV_ERR (%#x)", r.last);
	CHECK(evloop_set(&el, p[0], DND_EV_READ, NULL, NULL, NULL) == 0 &&
	      evloop_mask(&el, p[0]) == DND_EV_READ,
	      "errors-only -> read is a MOD that works");
	evloop_del(&el, p[0]);
	close(p[0]);
	evloop_free(&el);
}

/* The peer's shutdown(SHUT_WR) is reported as readable plus RDHUP. */
static void t_rdhup(void)
{
	struct evloop el;
	struct t_rec r;
	int s[2];

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) == -1)
		exit(DND_T_FAIL);
	evloop_set(&el, s[0], DND_EV_READ, t_on_read, NULL, &r);
	shutdown(s[1], SHUT_WR);
	CHECK(evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1 &&
	      (r.last & (DND_EV_READ | DND_EV_RDHUP)) ==
	      (DND_EV_READ | DND_EV_RDHUP), "peer shutdown: READ|RDHUP (%#x)",
	      r.last);
	t_close2(s);
	evloop_free(&el);
}

/*
 * DND_EV_EXCL: one fd in two loops with EPOLLEXCLUSIVE (the relay's shared
 * listener). One event wakes one of two waiting loops, never both; off
 * and on again (the listener's pause) works; alone it means 0.
 */
static void *t_excl_wait(void *arg)
{
	struct evloop *el = arg;

	evloop_poll(el, 300);
	return NULL;
}

static void t_excl(void)
{
	struct evloop a, b;
	struct t_rec ra, rb;
	pthread_t ta, tb;
	int p[2];

	evloop_init(&a, 64, 8);
	evloop_init(&b, 64, 8);
	t_rec_init(&ra);
	t_rec_init(&rb);
	t_pipe(p, false);
	ra.drain = rb.drain = p[0];
	CHECK(evloop_set(&a, p[0], DND_EV_READ | DND_EV_EXCL, t_on_read,
			 NULL, &ra) == 0 &&
	      evloop_set(&b, p[0], DND_EV_READ | DND_EV_EXCL, t_on_read,
			 NULL, &rb) == 0, "EPOLLEXCLUSIVE in two loops");
	CHECK(evloop_set(&a, p[0], 0, NULL, NULL, NULL) == 0 &&
	      evloop_set(&a, p[0], DND_EV_READ | DND_EV_EXCL, NULL, NULL,
			 NULL) == 0 &&
	      evloop_mask(&a, p[0]) == (DND_EV_READ | DND_EV_EXCL),
	      "exclusive interest off and on again");
	if (pthread_create(&ta, NULL, t_excl_wait, &a) ||
	    pthread_create(&tb, NULL, t_excl_wait, &b))
		exit(DND_T_FAIL);
	usleep(50000);	/* both asleep in epoll_wait */
	if (write(p[1], "x", 1) != 1)
		exit(DND_T_FAIL);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK(ra.rd + rb.rd == 1, "one event woke one loop (a %d, b %d)",
	      ra.rd, rb.rd);
	CHECK(evloop_set(&a, p[0], DND_EV_EXCL, NULL, NULL, NULL) == 0 &&
	      evloop_mask(&a, p[0]) == 0, "DND_EV_EXCL alone is no interest");
	t_close2(p);
	evloop_free(&a);
	evloop_free(&b);
}

/* Fds epoll cannot take are refused with its errno and leave no entry. */
static void t_bad_fds(void)
{
	struct evloop el;
	struct t_rec r;
	int p[2], fd;

	evloop_init(&el, 64, 8);
	t_rec_init(&r);
	t_pipe(p, false);
	t_close2(p);
	CHECK(evloop_set(&el, p[0], DND_EV_READ, t_on_read, NULL, &r) ==
	      -EBADF && evloop_mask(&el, p[0]) == 0, "closed fd: -EBADF");
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && evloop_set(&el, fd, DND_EV_READ, t_on_read, NULL,
				    &r) == -EPERM && evloop_mask(&el, fd) == 0,
	      "regular file: -EPERM");
	close(fd);
	evloop_free(&el);
}

/*
 * The table is sized once (relay.c sizes it from RLIMIT_NOFILE); it does
 * not grow: the last fd inside works, the first one past is -ERANGE.
 */
static void t_high_fd(void)
{
	struct rlimit rl;
	struct evloop el;
	struct t_rec r;
	int p[2], setsize, hi, over;
	uint64_t ctl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur < 64) {
		printf("# skip high fd: RLIMIT_NOFILE below 64\n");
		return;
	}
	setsize = (int)(rl.rlim_cur > 65536 ? 65536 : rl.rlim_cur) - 1;
	hi = setsize - 1;
	over = setsize;
	t_rec_init(&r);
	t_pipe(p, true);
	if (dup2(p[0], hi) != hi || dup2(p[0], over) != over)
		exit(DND_T_FAIL);
	CHECK(evloop_init(&el, setsize, 8) == 0, "init setsize %d", setsize);
	CHECK(evloop_set(&el, hi, DND_EV_READ, t_on_read, NULL, &r) == 0 &&
	      evloop_poll(&el, T_WAIT_MS) == 1 && r.rd == 1,
	      "fd %d (setsize - 1) fires", hi);
	ctl = el.ctl_calls;
	CHECK(evloop_set(&el, over, DND_EV_READ, t_on_read, NULL, &r) ==
	      -ERANGE && el.ctl_calls == ctl && evloop_mask(&el, over) == 0,
	      "fd %d (setsize) is -ERANGE, no epoll_ctl", over);
	CHECK(evloop_set(&el, -1, DND_EV_READ, t_on_read, NULL, &r) ==
	      -ERANGE && evloop_mask(&el, -1) == 0, "fd -1 is -ERANGE");
	evloop_del(&el, over);
	evloop_del(&el, -1);
	evloop_del(&el, hi);
	close(hi);
	close(over);
	t_close2(p);
	evloop_free(&el);
}

/* Nothing ready: the timeout returns 0 and advances el->now. */
static void t_timeout(void)
{
	struct evloop el;
	double t0, before;
	int n;

	evloop_init(&el, 64, 8);
	before = el.now;
	t0 = stats_now();
	n = evloop_poll(&el, 50);
	CHECK(n == 0 && stats_now() - t0 >= 0.045 && el.now - before >= 0.045,
	      "timeout 50 ms: 0 after %.3f s", stats_now() - t0);
	CHECK(el.wakeups == 0 && el.events == 0, "a timeout is no wakeup");
	evloop_free(&el);
}

/* A batch of one still serves every ready fd, one per wait. */
static void t_batch(void)
{
	struct t_rec r[3];
	struct evloop el;
	int p[3][2], i, polls = 0;

	evloop_init(&el, 64, 1);
	for (i = 0; i < 3; i++) {
		t_rec_init(&r[i]);
		t_pipe(p[i], true);
		r[i].drain = p[i][0];
		evloop_set(&el, p[i][0], DND_EV_READ, t_on_read, NULL, &r[i]);
	}
	while (polls < 10 && evloop_poll(&el, 0) == 1)
		polls++;
	CHECK(polls == 3 && r[0].rd == 1 && r[1].rd == 1 && r[2].rd == 1 &&
	      r[0].drain >= 0 && r[1].drain >= 0 && r[2].drain >= 0,
	      "maxevents 1: three waits, one call each (%d waits)", polls);
	CHECK(el.wakeups == 3 && el.events == 3,
	      "counters: 3 wakeups, 3 events");
	for (i = 0; i < 3; i++)
		t_close2(p[i]);
	evloop_free(&el);
}

int main(void)
{
	alarm(30);
	t_init_args();
	t_interest();
	t_callbacks();
	t_del_self();
	t_del_other(false);
	t_del_other(true);
	t_err_only();
	t_rdhup();
	t_excl();
	t_bad_fds();
	t_high_fd();
	t_timeout();
	t_batch();
	return CHECK_DONE();
}
