// SPDX-License-Identifier: MIT
/*
 * Small reads of /proc: one read() per file, since the kernel builds a
 * seq_file's text at open and hands it out whole for one-line files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kernel.h"

#define DND_URING_DISABLED "/proc/sys/kernel/io_uring_disabled"

ssize_t kernel_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

int kernel_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	ssize_t n = kernel_read_file(path, buf, sizeof(buf));
	long long x;

	if (n < 0)
		return (int)n;
	errno = 0;
	x = strtoll(buf, &end, 10);
	if (end == buf || errno)
		return -EINVAL;
	*v = x;
	return 0;
}

/* EPERM: the sysctl (Linux 6.6+) says who may; without it, a filter. */
static void kernel_uring_eperm(char *why, size_t len)
{
	long long dis = 0;

	kernel_read_ll(DND_URING_DISABLED, &dis);
	if (dis == 1)
		snprintf(why, len, "io_uring_setup: %s (kernel."
			 "io_uring_disabled=1: only root and members of "
			 "kernel.io_uring_group may use it; set it to 0)",
			 strerror(EPERM));
	else if (dis >= 2)
		snprintf(why, len, "io_uring_setup: %s (kernel."
			 "io_uring_disabled=%lld: disabled for everyone; set "
			 "it to 0)",
			 strerror(EPERM), dis);
	else
		snprintf(why, len, "io_uring_setup: %s (not by "
			 "kernel.io_uring_disabled: a seccomp filter, as in "
			 "containers, or a security module refuses it)",
			 strerror(EPERM));
}

int kernel_uring_why(int err, char *why, size_t len)
{
	if (!len)
		return err;
	if (err == -ENOSYS)
		snprintf(why, len, "io_uring_setup: %s (this kernel was built "
			 "without io_uring, CONFIG_IO_URING)",
			 strerror(ENOSYS));
	else if (err == -EPERM)
		kernel_uring_eperm(why, len);
	else if (err == -ENOMEM)
		snprintf(why, len, "io_uring_setup: %s (before Linux 5.12 a "
			 "ring counts against the locked-memory limit: raise "
			 "ulimit -l)", strerror(ENOMEM));
	else
		snprintf(why, len, "io_uring_setup: %s", strerror(-err));
	return err;
}
