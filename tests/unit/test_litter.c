// SPDX-License-Identifier: MIT
/* A killed session's temporary file: the parent removes exactly the file
 * the record names, beneath DIR, and nothing else. */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "serve/litter.h"

static char dir[] = "/tmp/dnd-test-litter.XXXXXX";

static int mk(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1) {
		perror(p);
		exit(DND_T_FAIL);
	}
	return fd;
}

static bool there(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

int main(void)
{
	static struct serve_litter r;
	struct dnd_confine c;
	char why[320], p[PATH_MAX];
	int fd, fd2;

	if (!mkdtemp(dir))
		return DND_T_FAIL;
	snprintf(p, sizeof(p), "%s/sub", dir);
	mkdir(p, 0700);
	if (confine_open(&c, dir, why, sizeof(why)) == -ENOSYS) {
		printf("# SKIP: no openat2 on this kernel: %s\n", why);
		return DND_T_SKIP;
	}

	fd = mk("sub/.n.dnd-AAAAAA");
	CHECK(litter_note(&r, "sub/n", 5, fd,
			  "/proc/self/fd/9/.n.dnd-AAAAAA") == 0, "noted");
	CHECK(litter_sweep(&c, &r) == 1 && !there("sub/.n.dnd-AAAAAA"),
	      "the recorded temporary is removed");
	CHECK(litter_sweep(&c, &r) == 0, "a record is swept once");

	/* Another file under that name now (a later session's): it stays.
	 * (fd stays open meanwhile, so its inode number is not reused.) */
	CHECK(litter_note(&r, "sub/n", 5, fd,
			  "/proc/self/fd/9/.n.dnd-AAAAAA") == 0, "noted");
	fd2 = mk("sub/.n.dnd-AAAAAA");
	CHECK(litter_sweep(&c, &r) == 0 && there("sub/.n.dnd-AAAAAA"),
	      "a different inode under the name is not removed");
	close(fd);

	/* A cleared record: the landing settled, nothing to remove. */
	CHECK(litter_note(&r, "sub/n", 5, fd2,
			  "/proc/self/fd/9/.n.dnd-AAAAAA") == 0, "noted");
	litter_clear(&r);
	CHECK(litter_sweep(&c, &r) == 0 && there("sub/.n.dnd-AAAAAA"),
	      "a cleared record removes nothing");

	/* A record whose name escapes DIR resolves nowhere. */
	CHECK(litter_note(&r, "../n", 4, fd2, "x/.n.dnd-AAAAAA") == 0,
	      "noted");
	CHECK(litter_sweep(&c, &r) == 0, "an escaping name removes nothing");
	/* A tmp with a slash in it (a damaged record) is refused. */
	CHECK(litter_note(&r, "sub/n", 5, fd2,
			  "/proc/self/fd/9/.n.dnd-AAAAAA") == 0, "noted");
	r.tmp[1] = '/';
	CHECK(litter_sweep(&c, &r) == -EINVAL && there("sub/.n.dnd-AAAAAA"),
	      "a temporary name with a slash is refused");
	close(fd2);

	memset(p, 'a', sizeof(p));
	CHECK(litter_note(&r, p, sizeof(p), 0, "t") == -ENAMETOOLONG,
	      "an over-long name is not recorded");
	CHECK(litter_sweep(&c, &r) == 0, "and nothing is swept");

	snprintf(p, sizeof(p), "rm -rf %s", dir);
	if (system(p))
		return DND_T_FAIL;
	confine_close(&c);
	return CHECK_DONE();
}
