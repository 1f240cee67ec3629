// SPDX-License-Identifier: MIT
/*
 * The transfer driver: N streams of one file both ways, byte-exact; one
 * stream failing stops the others and is the one reported; the file half
 * alone (xfer_land); the checks a method makes of its end.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "xfer/method.h"
#include "xfer/xfer.h"

#define NS	4
#define SIZE	(3 * 1048576 + 4097)	/* not a multiple of NS or a page */

static char dir[] = "/tmp/dnd-test-xfer.XXXXXX";
static char src[256], dst[256];

struct side {
	struct xfer t;
	int r;
};

static void *run_side(void *arg)
{
	struct side *s = arg;

	s->r = xfer_run(&s->t);
	return NULL;
}

/* Opens path n times, each positioned at its stream's first byte. */
static void open_at(const char *path, int flags, int *fd, off_t *pos,
		    uint64_t *len)
{
	uint64_t chunk = SIZE / NS;
	int i;

	for (i = 0; i < NS; i++) {
		pos[i] = (off_t)(chunk * (uint64_t)i);
		len[i] = i == NS - 1 ? SIZE - chunk * (NS - 1) : chunk;
		fd[i] = open(path, flags, 0600);
		lseek(fd[i], pos[i], SEEK_SET);
	}
}

static int prepare(struct side *s, const char *method, bool sender,
		   const int *sock, const int *fd, const off_t *pos,
		   const uint64_t *len)
{
	const struct xfer_cfg c = {
		.m = method_find(method),
		.sender = sender,
		.ep = DND_EP_FILE,
		.fmode = S_IFREG,
		.bsz = 65536,
	};
	int i, r = xfer_open(&s->t, &c, NS);

	for (i = 0; !r && i < NS; i++)
		xfer_stream(&s->t, (unsigned int)i, sock[i], fd[i], pos[i],
			    XFER_LENGTH, len[i]);
	return r ? r : xfer_setup(&s->t);
}

static bool same_files(void)
{
	static char a[SIZE], b[SIZE];
	int fa = open(src, O_RDONLY), fb = open(dst, O_RDONLY);
	bool ok = read(fa, a, SIZE) == SIZE && read(fb, b, SIZE) == SIZE &&
		  !memcmp(a, b, SIZE) && read(fb, b, 1) == 0;

	close(fa);
	close(fb);
	return ok;
}

/* NS streams of rw both ways over socketpairs, each at its own offset. */
static void test_streams(const char *smethod, const char *rmethod)
{
	int sv[NS][2], sfd[NS], rfd[NS], ssock[NS], rsock[NS], i;
	off_t pos[NS];
	uint64_t len[NS];
	struct side snd, rcv;
	pthread_t tid;

	unlink(dst);
	open_at(src, O_RDONLY, sfd, pos, len);
	open_at(dst, O_WRONLY | O_CREAT, rfd, pos, len);
	for (i = 0; i < NS; i++) {
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]);
		ssock[i] = sv[i][0];
		rsock[i] = sv[i][1];
	}
	CHECK(!prepare(&snd, smethod, true, ssock, sfd, pos, len) &&
	      !prepare(&rcv, rmethod, false, rsock, rfd, pos, len),
	      "%s -> %s: %d streams set up", smethod, rmethod, NS);
	pthread_create(&tid, NULL, run_side, &snd);
	rcv.r = xfer_run(&rcv.t);
	pthread_join(tid, NULL);
	CHECK(snd.r == 0 && rcv.r == 0 && xfer_done(&snd.t) == SIZE &&
	      xfer_done(&rcv.t) == SIZE && !xfer_failed(&rcv.t),
	      "%s -> %s: every byte moved (sent %llu, got %llu, r %d/%d)",
	      smethod, rmethod, (unsigned long long)xfer_done(&snd.t),
	      (unsigned long long)xfer_done(&rcv.t), snd.r, rcv.r);
	CHECK(same_files(), "%s -> %s: the file landed byte-exact", smethod,
	      rmethod);
	CHECK(rcv.t.timed && rcv.t.cost.wall > 0, "the driver timed it");
	xfer_close(&snd.t);
	xfer_close(&rcv.t);
	for (i = 0; i < NS; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
		close(sfd[i]);
		close(rfd[i]);
	}
}

/*
 * Stream 2's sender closes at once, the others send a little and then hang
 * on: the receiver must fail, name stream 2, and cut the others (without
 * the cut it would wait for ever: alarm() ends the test then).
 */
static void test_one_fails(void)
{
	int sv[NS][2], rfd[NS], rsock[NS], i;
	off_t pos[NS];
	uint64_t len[NS];
	struct side rcv;
	const struct dnd_xfer *bad;

	unlink(dst);
	open_at(dst, O_WRONLY | O_CREAT, rfd, pos, len);
	for (i = 0; i < NS; i++) {
		socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]);
		rsock[i] = sv[i][1];
		if (write(sv[i][0], "0123456789", 10) != 10)
			CHECK(0, "write to the socketpair");
	}
	close(sv[2][0]);
	prepare(&rcv, "rw", false, rsock, rfd, pos, len);
	alarm(20);
	rcv.r = xfer_run(&rcv.t);
	alarm(0);
	bad = xfer_failed(&rcv.t);
	CHECK(rcv.r == -ENODATA && bad == &rcv.t.st[2],
	      "the stream whose peer closed is the one reported (r %d, "
	      "stream %ld)", rcv.r, bad ? (long)(bad - rcv.t.st) : -1L);
	CHECK(xfer_done(&rcv.t) == 4 * 10, "the others stopped after what they "
	      "got (%llu bytes)", (unsigned long long)xfer_done(&rcv.t));
	xfer_close(&rcv.t);
	for (i = 0; i < NS; i++) {
		if (i != 2)
			close(sv[i][0]);
		close(sv[i][1]);
		close(rfd[i]);
	}
}

static void stamp(unsigned char *buf, size_t n, uint64_t i, void *arg)
{
	(*(int *)arg)++;
	memcpy(buf, &i, n < sizeof(i) ? n : sizeof(i));
}

/* The file half alone: every piece stamped, landed at its offset. */
static void test_land(const char *method)
{
	const struct xfer_cfg c = {
		.m = method_find(method), .ep = DND_EP_FILE,
		.fmode = S_IFREG, .bsz = 4096,
	};
	static unsigned char buf[4096], got[4096];
	uint64_t i, size = 10 * 4096 + 100;
	struct xfer t;
	int fd, calls = 0, r;
	bool ok = true;

	if (!c.m) {
		printf("# %s not built: skipped\n", method);
		return;
	}
	unlink(dst);
	fd = open(dst, O_RDWR | O_CREAT, 0600);
	memset(buf, 0x5a, sizeof(buf));
	r = xfer_open(&t, &c, 1);
	xfer_stream(&t, 0, -1, fd, 0, XFER_LENGTH, size);
	if (!r)
		r = xfer_setup(&t);
	if (!r)
		r = xfer_land(&t.st[0], size, buf, stamp, &calls);
	CHECK(r == 0 && calls == 11 && t.st[0].done == size,
	      "%s: xfer_land put %llu bytes in %d pieces (r %d)", method,
	      (unsigned long long)t.st[0].done, calls, r);
	for (i = 0; i < 11; i++) {
		size_t n = i == 10 ? 100 : 4096;

		ok = ok && pread(fd, got, n, (off_t)(i * 4096)) == (ssize_t)n &&
		     !memcmp(got, &i, 8) && got[8] == 0x5a && got[n - 1] == 0x5a;
	}
	CHECK(ok, "%s: every piece landed stamped at its offset", method);
	xfer_close(&t);
	close(fd);
}

static void test_check(void)
{
	struct xfer_cfg c = { .m = method_find("sendfile"), .sender = false,
			      .ep = DND_EP_FILE, .fmode = S_IFREG };
	char why[256] = "";
	struct xfer t;

	CHECK(xfer_check(&c, why, sizeof(why)) == -EINVAL &&
	      !strcmp(why, "sendfile cannot receive"), "sendfile cannot "
	      "receive: %s", why);
	c.m = method_find("mmap");
	c.ep = DND_EP_NULL;
	CHECK(xfer_check(&c, why, sizeof(why)) == -EINVAL &&
	      strstr(why, "/dev/null"), "mmap cannot land in /dev/null: %s",
	      why);
	c.m = method_find("rw");
	CHECK(xfer_check(&c, why, sizeof(why)) == 0, "rw can");
	CHECK(xfer_open(&t, &c, 0) == -EINVAL &&
	      xfer_open(&t, &c, DND_XFER_MAX_STREAMS + 1) == -EINVAL,
	      "0 or more than %d streams refused", DND_XFER_MAX_STREAMS);
}

int main(void)
{
	static char data[SIZE];
	int fd, i;

	if (!mkdtemp(dir))
		return DND_T_FAIL;
	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(dst, sizeof(dst), "%s/dst", dir);
	for (i = 0; i < SIZE; i++)
		data[i] = (char)(i * 7 + i / 4096);
	fd = open(src, O_WRONLY | O_CREAT, 0600);
	if (write(fd, data, SIZE) != SIZE)
		return DND_T_FAIL;
	close(fd);
	test_streams("rw", "rw");
	test_streams("splice", "splice");
	test_streams("rw", "vmsplice");
	test_one_fails();
	test_land("rw");
	test_land("uring");
	test_check();
	unlink(src);
	unlink(dst);
	rmdir(dir);
	return CHECK_DONE();
}
