// SPDX-License-Identifier: MIT
/* kernel.c: /proc-style reads from files this test writes, and the io_uring
 * setup explainer's answer for each errno. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/kernel.h"

static char dir[] = "/tmp/dnd-test-kernel.XXXXXX";

static const char *t_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f || fputs(text, f) == EOF || fclose(f)) {
		perror(path);
		exit(DND_T_FAIL);
	}
	return path;
}

/* Removes what t_file() made: only this run's directory. */
static void t_cleanup(void)
{
	static const char *const names[] = { "line", "num", "neg", "word",
					     "empty" };
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static void t_read_file(void)
{
	const char *p = t_file("line", "12345\n");
	char buf[64], tiny[4];

	CHECK(kernel_read_file(p, buf, sizeof(buf)) == 6 &&
	      !strcmp(buf, "12345\n"), "a one-line file is read whole");
	CHECK(kernel_read_file(p, tiny, sizeof(tiny)) == 3 &&
	      !strcmp(tiny, "123"), "len - 1 bytes at most, NUL-terminated");
	CHECK(kernel_read_file(p, buf, 0) == -EINVAL, "len 0: -EINVAL");
	buf[0] = 'x';
	CHECK(kernel_read_file("/nonexistent/dnd", buf, sizeof(buf)) ==
	      -ENOENT && buf[0] == '\0', "a missing file: -ENOENT, buf empty");
}

static void t_read_ll(void)
{
	long long v = 99;

	CHECK(kernel_read_ll(t_file("num", "1048576\n"), &v) == 0 &&
	      v == 1048576, "a sysctl number: %lld", v);
	CHECK(kernel_read_ll(t_file("neg", "-7"), &v) == 0 && v == -7,
	      "a negative number without a newline");
	v = 99;
	CHECK(kernel_read_ll(t_file("word", "never\n"), &v) == -EINVAL &&
	      v == 99, "text that is no number: -EINVAL, *v kept");
	CHECK(kernel_read_ll(t_file("empty", ""), &v) == -EINVAL && v == 99,
	      "an empty file: -EINVAL");
	CHECK(kernel_read_ll("/nonexistent/dnd", &v) == -ENOENT && v == 99,
	      "a missing file: -ENOENT");
	CHECK(kernel_read_ll("/proc/sys/fs/pipe-max-size", &v) == 0 &&
	      v >= 4096, "the real fs.pipe-max-size: %lld", v);
}

static void t_uring_why(void)
{
	long long dis = 0;
	char why[320];

	CHECK(kernel_uring_why(-ENOSYS, why, sizeof(why)) == -ENOSYS &&
	      strstr(why, "CONFIG_IO_URING"), "ENOSYS: %s", why);
	CHECK(kernel_uring_why(-ENOMEM, why, sizeof(why)) == -ENOMEM &&
	      strstr(why, "ulimit -l"), "ENOMEM: %s", why);
	CHECK(kernel_uring_why(-EINVAL, why, sizeof(why)) == -EINVAL &&
	      !strcmp(why, "io_uring_setup: Invalid argument"),
	      "another errno is named as it is: %s", why);
	kernel_read_ll("/proc/sys/kernel/io_uring_disabled", &dis);
	CHECK(kernel_uring_why(-EPERM, why, sizeof(why)) == -EPERM &&
	      strstr(why, dis == 1 ? "io_uring_group" :
		     dis >= 2 ? "disabled for everyone" : "seccomp"),
	      "EPERM with kernel.io_uring_disabled=%lld: %s", dis, why);
	why[0] = 'x';
	why[1] = 'y';
	CHECK(kernel_uring_why(-ENOSYS, why, 1) == -ENOSYS && why[0] == '\0' &&
	      why[1] == 'y', "len 1: only the NUL is written");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return DND_T_FAIL;
	}
	t_read_file();
	t_read_ll();
	t_uring_why();
	t_cleanup();
	return CHECK_DONE();
}
