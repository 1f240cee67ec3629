/* SPDX-License-Identifier: MIT */
/*
 * The running kernel as /proc tells it: small files read at once, sysctl
 * numbers, and what an io_uring_setup() refusal means on this machine.
 */
#ifndef DND_KERNEL_H
#define DND_KERNEL_H

#include <sys/types.h>
#include <stddef.h>

/*
 * Reads the start of a /proc or /sys file into buf with one read(), at most
 * len - 1 bytes, and NUL-terminates it: the whole of a one-line file, the
 * first lines of /proc/stat. Returns the bytes read, -EINVAL when len is 0,
 * or the -errno of open() or read(). Never blocks on such a file.
 */
ssize_t kernel_read_file(const char *path, char *buf, size_t len);

/*
 * The integer a file starts with (a sysctl such as
 * /proc/sys/fs/pipe-max-size) into *v. Returns 0; -errno when the file
 * cannot be read, or -EINVAL when it does not start with a number (*v is
 * then left alone).
 */
int kernel_read_ll(const char *path, long long *v);

/*
 * Says in why (len bytes, always NUL-terminated when len > 0) what the
 * io_uring_setup() failure err (-errno) means here and how to fix it: no
 * io_uring in the kernel (ENOSYS), kernel.io_uring_disabled or a seccomp
 * filter (EPERM), the locked-memory limit of kernels before 5.12 (ENOMEM).
 * Reads /proc/sys/kernel/io_uring_disabled. Returns err unchanged.
 */
int kernel_uring_why(int err, char *why, size_t len);

#endif
