// SPDX-License-Identifier: MIT
/* Names beneath dnd serve's DIR: every bad name refused with its reason,
 * good ones resolved, and no escape while a thread swaps a directory for a
 * symlink to / underneath the resolver. */
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/stats.h"
#include "serve/confine.h"

static char dir[] = "/tmp/dnd-test-confine.XXXXXX";
static struct dnd_confine conf;

static void mkfile(const char *rel, const char *text)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd == -1 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		perror(p);
	close(fd);
}

static void at(const char *rel, char *p, size_t len)
{
	snprintf(p, len, "%s/%s", dir, rel);
}

/* DIR: f, sub/g, sub/link -> ../f, etc -> /etc, fifo, sub2/, r/etc/passwd
 * and rl -> / (the race's pair). */
static void build_dir(void)
{
	char p[PATH_MAX];

	mkfile("f", "top");
	at("sub", p, sizeof(p));
	mkdir(p, 0700);
	mkfile("sub/g", "inner");
	at("sub/link", p, sizeof(p));
	symlink("../f", p);
	at("etc", p, sizeof(p));
	symlink("/etc", p);
	at("fifo", p, sizeof(p));
	mkfifo(p, 0600);
	at("sub2", p, sizeof(p));
	mkdir(p, 0700);
	at("r", p, sizeof(p));
	mkdir(p, 0700);
	at("r/etc", p, sizeof(p));
	mkdir(p, 0700);
	mkfile("r/etc/passwd", "not the real one");
	at("rl", p, sizeof(p));
	symlink("/", p);
}

/* Expects name (n bytes) refused by resolve and open_read with err and a
 * message holding text. */
static void refused(const char *name, size_t n, int err, const char *text)
{
	struct dnd_confined t;
	char why[1024] = "", why2[1024] = "";
	int rc, rc2, fd = -1;

	rc = confine_resolve(&conf, name, n, &t, why, sizeof(why));
	rc2 = confine_open_read(&conf, name, n, &fd, why2, sizeof(why2));
	CHECK(rc == err && t.dirfd == -1 && strstr(why, text),
	      "resolve refuses: %s (%d)", why, rc);
	CHECK(rc2 == err && fd == -1 && strstr(why2, text),
	      "open_read refuses: %s (%d)", why2, rc2);
	/* the client hears of the served directory, not of its path */
	CHECK(!strstr(why, conf.dir) && !strstr(why2, conf.dir),
	      "the server's path stays out: %s / %s", why, why2);
}

static void test_bad_names(void)
{
	char big[PATH_MAX + 8], comp[NAME_MAX + 8], why[256];

	refused("", 0, -EINVAL, "empty name");
	refused("/etc/passwd", 11, -EINVAL, "'/etc/passwd' is absolute");
	refused("../x", 4, -EINVAL, "'../x' has a '..' component");
	refused("sub/../f", 8, -EINVAL, "'..' component");
	refused("sub/..", 6, -EINVAL, "'..' component");
	refused("f\0x", 3, -EINVAL, "'f\\x00x' holds a NUL byte at offset 1");
	memset(big, 'a', sizeof(big));
	for (size_t i = 100; i < PATH_MAX; i += 100)
		big[i] = '/';
	refused(big, PATH_MAX, -EINVAL, "name of 4096 bytes; the limit is 4095");
	memset(comp, 'c', sizeof(comp));
	refused(comp, NAME_MAX + 1, -EINVAL, "component of 256 bytes");
	refused("sub/", 4, -EINVAL, "does not end in a file name");
	refused("sub/.", 5, -EINVAL, "does not end in a file name");
	refused("etc/passwd", 10, -ELOOP, "crosses a symbolic link");
	refused("etc", 3, -ELOOP, "'etc' is a symbolic link");
	refused("sub/link", 8, -ELOOP, "'sub/link' is a symbolic link");
	refused("rl/etc/passwd", 13, -ELOOP, "crosses a symbolic link");
	refused("fifo", 4, -EINVAL, "'fifo' is a FIFO, not a regular file");
	refused("sub", 3, -EISDIR, "'sub' is a directory, not a regular file");
	refused("nodir/x", 7, -ENOENT, "no such directory beneath the served "
		"directory (dnd serve creates none: create 'nodir' beneath it "
		"on the server first)");
	refused("f/x", 3, -ENOTDIR, "is not a directory");
	refused("a\nb/x", 5, -EINVAL, "name 'a\\nb/x' holds a control "
		"character (byte 0x0a at offset 1)");
	at("null", big, sizeof(big));
	if (mknod(big, S_IFCHR | 0600, makedev(1, 3)) == 0)
		refused("null", 4, -EINVAL, "'null' is a device, not a regular");
	else
		printf("# no device check: mknod needs CAP_MKNOD\n");
	CHECK(confine_check_name(comp, NAME_MAX, why, sizeof(why)) == 0,
	      "a component of NAME_MAX bytes is fine");
}

/* Expects name to resolve to an fd whose file reads text (NULL: new). */
static void resolves(const char *name, const char *text)
{
	struct dnd_confined t;
	char why[1024] = "", buf[64] = "";
	int rc, fd = -1;
	ssize_t n;

	rc = confine_resolve(&conf, name, strlen(name), &t, why, sizeof(why));
	CHECK(rc == 0 && t.dirfd >= 0 && t.exists == !!text &&
	      !strcmp(t.base, strrchr(name, '/') ? strrchr(name, '/') + 1 : name),
	      "'%s' resolves (base %s, exists %d) %s", name, t.base, t.exists,
	      why);
	if (!rc)
		close(t.dirfd);
	rc = confine_open_read(&conf, name, strlen(name), &fd, why, sizeof(why));
	if (!text) {
		CHECK(rc == -ENOENT && strstr(why, "no such file"),
		      "'%s' cannot be pulled: %s", name, why);
		return;
	}
	n = rc ? -1 : read(fd, buf, sizeof(buf) - 1);
	CHECK(n == (ssize_t)strlen(text) && !memcmp(buf, text, (size_t)n) &&
	      !(fcntl(fd, F_GETFL) & O_NONBLOCK), "'%s' opens and reads: %s",
	      name, why);
	if (fd >= 0)
		close(fd);
}

/* What dnd serve's landing code will do with a resolved name. */
static bool land(const struct dnd_confined *t)
{
	int fd = openat(t->dirfd, ".tmp", O_WRONLY | O_CREAT | O_EXCL |
			O_CLOEXEC, 0600);
	bool ok = fd != -1 && write(fd, "landed", 6) == 6;

	if (fd != -1)
		close(fd);
	return ok && renameat2(t->dirfd, ".tmp", t->dirfd, t->base,
			       RENAME_NOREPLACE) == 0;
}

static void test_good_names(void)
{
	struct dnd_confined t;
	char why[256];
	uint64_t avail = 0;

	resolves("f", "top");
	resolves("new", NULL);
	resolves("sub/g", "inner");
	resolves("sub/new", NULL);
	resolves("sub2/new", NULL);
	resolves("./sub//g", "inner");
	CHECK(confine_resolve(&conf, "sub/new", 7, &t, why, sizeof(why)) == 0 &&
	      land(&t), "a temporary lands by renameat2 in the parent fd");
	resolves("sub/new", "landed");
	close(t.dirfd);
	CHECK(confine_space(conf.dirfd, "the served directory", 1, &avail, why,
			    sizeof(why)) == 0 && avail,
	      "one byte fits (%llu free)", (unsigned long long)avail);
	CHECK(confine_space(conf.dirfd, "the served directory", UINT64_MAX,
			    &avail, why, sizeof(why)) ==
	      -ENOSPC && strstr(why, "18446744073709551615 bytes") &&
	      strstr(why, "bytes (") && !strstr(why, dir) &&
	      strstr(why, "the served directory"),
	      "too much refused: %s", why);
}

struct swapper {
	atomic_bool stop;
	unsigned long swaps;
};

/* Swaps DIR/r (a directory) and DIR/rl (a symlink to /) until told to stop;
 * atomically where the filesystem can, else with three renames. */
static void *swap_main(void *arg)
{
	struct swapper *s = arg;
	char r[PATH_MAX], rl[PATH_MAX], tmp[PATH_MAX];

	at("r", r, sizeof(r));
	at("rl", rl, sizeof(rl));
	at("r.tmp", tmp, sizeof(tmp));
	while (!atomic_load(&s->stop)) {
		if (renameat2(AT_FDCWD, r, AT_FDCWD, rl, RENAME_EXCHANGE) == -1) {
			rename(r, tmp);
			rename(rl, r);
			rename(tmp, rl);
		}
		s->swaps++;
	}
	return NULL;
}

/* Resolves r/etc/passwd for a second while r flips: every success must be
 * the file inside DIR, never the real /etc/passwd. */
static void test_race(void)
{
	struct swapper s = { false, 0 };
	unsigned long ok = 0, refused = 0, escaped = 0;
	struct stat inner, dirst, got;
	struct dnd_confined t;
	char p[PATH_MAX], why[1024];
	double end = stats_now() + 1.0;
	pthread_t th;
	int fd;

	at("r/etc/passwd", p, sizeof(p));
	stat(p, &inner);
	at("r/etc", p, sizeof(p));
	stat(p, &dirst);
	pthread_create(&th, NULL, swap_main, &s);
	while (stats_now() < end) {
		if (confine_open_read(&conf, "r/etc/passwd", 12, &fd, why,
				      sizeof(why)) == 0) {
			fstat(fd, &got);
			close(fd);
			escaped += got.st_ino != inner.st_ino ||
				   got.st_dev != inner.st_dev;
			ok++;
		} else {
			refused++;
		}
		if (confine_resolve(&conf, "r/etc/passwd", 12, &t, why,
				    sizeof(why)) == 0) {
			fstat(t.dirfd, &got);
			close(t.dirfd);
			escaped += got.st_ino != dirst.st_ino;
		}
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	CHECK(escaped == 0 && ok > 0 && refused > 0,
	      "race: %lu opened inside, %lu refused, %lu escaped (%lu swaps)",
	      ok, refused, escaped, s.swaps);
}

int main(void)
{
	char why[1024], cmd[128];
	int rc;

	if (!mkdtemp(dir))
		return DND_T_FAIL;
	build_dir();
	rc = confine_open(&conf, dir, why, sizeof(why));
	if (rc == -ENOSYS) {
		printf("# SKIP: %s\n", why);
		return DND_T_SKIP;
	}
	CHECK(rc == 0 && conf.dirfd >= 0, "open DIR: %s", why);
	if (!rc) {
		test_bad_names();
		test_good_names();
		test_race();
		confine_close(&conf);
		confine_close(&conf);
	}
	at("nonexistent", cmd, sizeof(cmd));
	CHECK(confine_open(&conf, cmd, why, sizeof(why)) == -ENOENT &&
	      conf.dirfd == -1 && strstr(why, "cannot open directory"),
	      "a missing DIR: %s", why);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return CHECK_DONE();
}
