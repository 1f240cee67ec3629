/* SPDX-License-Identifier: MIT */
/* XXH3-64 of what was sent and what landed, computed outside the timing. */
#ifndef DND_HASH_H
#define DND_HASH_H

#include <sys/types.h>
#include <stdint.h>

/* Hashes len bytes of fd from off (pread; the fd position is untouched).
 * Returns 0, -ENODATA if the file is shorter, or -errno. */
int hash_fd(int fd, off_t off, uint64_t len, uint64_t *out);

/* hash_fd through O_DIRECT (a second open of fd's file): what the device
 * holds, not the page cache. -EINVAL when the file system refuses it. */
int hash_fd_direct(int fd, off_t off, uint64_t len, uint64_t *out);

/* The hash of len zero bytes (what /dev/zero sent). */
uint64_t hash_zeros(uint64_t len);

#endif
