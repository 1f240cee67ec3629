/* SPDX-License-Identifier: MIT */
/*
 * XXH3-64 of what was sent and what landed. Include this, not <xxhash.h>:
 * on x86-64 it also takes libxxhash's runtime dispatch (xxh_x86dispatch.h),
 * so XXH3_64bits_update() and friends run the AVX2 or AVX-512 code where
 * the CPU has it. Same hashes; on this VM 64 KiB updates went from 16.9 to
 * 72.5 GB/s, which is most of what verification costs a receiver.
 */
#ifndef DND_HASH_H
#define DND_HASH_H

#include <sys/types.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <xxh_x86dispatch.h>
#endif

/* Hashes len bytes of fd from off (a regular file through a mapping, else
 * pread; the fd position is untouched). Returns 0, -ENODATA if the file is
 * shorter or is cut short meanwhile, -EIO for a page that cannot be read,
 * or -errno. */
int hash_fd(int fd, off_t off, uint64_t len, uint64_t *out);
/* The same, fed into st (which goes on from there): a receiver's hash of
 * a kept prefix that the bytes arriving after it continue. */
int hash_fd_into(XXH3_state_t *st, int fd, off_t off, uint64_t len);
/* The same, each byte fed into also too, from the one read: a -P N
 * sender's whole file (st) and the range one stream carried (also). */
int hash_fd_into2(XXH3_state_t *st, XXH3_state_t *also, int fd, off_t off,
		  uint64_t len);

/* hash_fd, or when direct the same through O_DIRECT (a second open of
 * fd's file: what the device holds, not the page cache; -EINVAL when the
 * file system refuses it), giving up with -ECANCELED once *stop is set
 * (by another thread); stop NULL: only a signal stops it. */
int hash_fd_until(int fd, off_t off, uint64_t len, bool direct,
		  const atomic_bool *stop, uint64_t *out);

/* The hash of len zero bytes (what /dev/zero sent). */
uint64_t hash_zeros(uint64_t len);

#endif
