// SPDX-License-Identifier: MIT
/*
 * endpoint_changed(): a source written while it is sent is caught; one whose
 * name goes away (unlinked, renamed over as dnd serve --replace does) or
 * gains a hard link while it is sent is not, since its bytes stay as read.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "xfer/endpoint.h"

static char dir[64], src[96], other[96];

/* Writes data to path (created or truncated). */
static void t_put(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t len = (ssize_t)strlen(data);

	if (fd == -1 || write(fd, data, (size_t)len) != len || close(fd)) {
		perror(path);
		exit(DND_T_FAIL);
	}
}

/*
 * Waits until the clock that stamps files has moved past the stamps
 * already on src: a change in the same tick could not be told apart.
 * Bounded: at most 2 s.
 */
static void t_next_tick(void)
{
	struct timespec ts = { 0, 2000000 };
	struct stat a, b;
	int i;

	if (stat(src, &a) == -1)
		exit(DND_T_FAIL);
	for (i = 0; i < 1000; i++) {
		nanosleep(&ts, NULL);
		t_put(other, "x");
		if (stat(other, &b) == -1)
			exit(DND_T_FAIL);
		if (b.st_mtim.tv_sec != a.st_mtim.tv_sec ||
		    b.st_mtim.tv_nsec != a.st_mtim.tv_nsec)
			return;
	}
	exit(DND_T_FAIL);
}

/* src opened as a source, after its last write. */
static void t_open(struct endpoint *e)
{
	char err[256];

	t_put(src, "the bytes as they were read");
	t_next_tick();
	CHECK(endpoint_source(e, src, false, 0, err, sizeof(err)) == 0,
	      "open %s: %s", src, err);
}

int main(void)
{
	struct endpoint e;
	char what[32];
	int fd, r;

	snprintf(dir, sizeof(dir), "/tmp/dnd-endpoint-XXXXXX");
	if (!mkdtemp(dir))
		return DND_T_FAIL;
	snprintf(src, sizeof(src), "%s/src", dir);
	snprintf(other, sizeof(other), "%s/other", dir);

	t_open(&e);
	CHECK(endpoint_changed(&e, what, sizeof(what)) == 0, "untouched");
	endpoint_close(&e);

	/* dnd serve --replace, mv, an editor's save: a new file renamed over
	 * the name. The one being read loses its link (its ctime moves), not
	 * a byte. */
	t_open(&e);
	t_put(other, "a new version under the name");
	CHECK(rename(other, src) == 0, "rename over the source");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 0, "renamed over: %d (%s)", r, r > 0 ? what : "");
	endpoint_close(&e);

	t_open(&e);
	CHECK(unlink(src) == 0, "unlink the source");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 0, "unlinked: %d (%s)", r, r > 0 ? what : "");
	endpoint_close(&e);

	t_open(&e);
	unlink(other);
	CHECK(link(src, other) == 0, "hard link to the source");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 0, "linked: %d (%s)", r, r > 0 ? what : "");
	endpoint_close(&e);
	unlink(other);

	/* Written in place, same size: the mtime (and ctime) say so. */
	t_open(&e);
	fd = open(src, O_WRONLY | O_CLOEXEC);
	CHECK(fd != -1 && pwrite(fd, "T", 1, 0) == 1 && close(fd) == 0,
	      "rewrite one byte");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 1 && !strcmp(what, "mtime/ctime"), "rewritten: %d (%s)", r,
	      what);
	endpoint_close(&e);

	/* Written, then unlinked: the write still shows. */
	t_open(&e);
	fd = open(src, O_WRONLY | O_APPEND | O_CLOEXEC);
	CHECK(fd != -1 && write(fd, "more", 4) == 4 && close(fd) == 0,
	      "append");
	CHECK(unlink(src) == 0, "unlink the appended source");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 1 && !strcmp(what, "mtime/size"),
	      "appended, unlinked: %d (%s)", r, what);
	endpoint_close(&e);

	/* Written with its mtime set back (touch -r): the ctime says so. */
	t_open(&e);
	fd = open(src, O_WRONLY | O_CLOEXEC);
	CHECK(fd != -1 && pwrite(fd, "T", 1, 0) == 1 &&
	      futimens(fd, (const struct timespec[2]){ e.st.st_atim,
						       e.st.st_mtim }) == 0 &&
	      close(fd) == 0, "rewrite, mtime set back");
	r = endpoint_changed(&e, what, sizeof(what));
	CHECK(r == 1 && !strcmp(what, "ctime"), "mtime set back: %d (%s)", r,
	      what);
	endpoint_close(&e);

	unlink(src);
	unlink(other);
	rmdir(dir);
	return CHECK_DONE();
}
