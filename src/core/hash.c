// SPDX-License-Identifier: MIT
/* Streaming XXH3-64 (libxxhash) over files and runs of zeros. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/io.h"

#define HASH_CHUNK (1U << 20)
/* O_DIRECT reads: aligned for 512- and 4096-byte blocks, and large, since
 * each waits for the device with no read-ahead. */
#define HASH_DIO_ALIGN	4096
#define HASH_DIO_CHUNK	(16U << 20)

/* Whether to give up: a signal (-EINTR) or another thread's stop. */
static int hash_stopped(const atomic_bool *stop)
{
	if (io_stop_signal)
		return -EINTR;
	return stop && atomic_load(stop) ? -ECANCELED : 0;
}

static int hash_buffered(int fd, off_t off, uint64_t len, uint64_t *out,
			 const atomic_bool *stop)
{
	XXH3_state_t *st = XXH3_createState();
	char *buf = malloc(HASH_CHUNK);
	int ret = 0;

	if (!st || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	XXH3_64bits_reset(st);
	while (len) {
		size_t want = len < HASH_CHUNK ? (size_t)len : HASH_CHUNK;
		ssize_t n = pread(fd, buf, want, off);

		if ((ret = hash_stopped(stop)))
			goto out;
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n ? -errno : -ENODATA;
			goto out;
		}
		XXH3_64bits_update(st, buf, (size_t)n);
		off += n;
		len -= (uint64_t)n;
	}
	*out = XXH3_64bits_digest(st);
out:
	free(buf);
	XXH3_freeState(st);
	return ret;
}

static int hash_direct(int fd, off_t off, uint64_t len, uint64_t *out,
		       const atomic_bool *stop)
{
	size_t skip = (size_t)(off % HASH_DIO_ALIGN);
	XXH3_state_t *st = XXH3_createState();
	int dfd = io_reopen_direct(fd, O_RDONLY);
	void *buf = NULL;
	int ret = 0;

	if (dfd < 0 || !st ||
	    posix_memalign(&buf, HASH_DIO_ALIGN, HASH_DIO_CHUNK)) {
		ret = dfd < 0 ? dfd : -ENOMEM;
		goto out;
	}
	XXH3_64bits_reset(st);
	off -= (off_t)skip;
	while (len) {
		ssize_t n = pread(dfd, buf, HASH_DIO_CHUNK, off);
		size_t use;

		if ((ret = hash_stopped(stop)))
			goto out;
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= (ssize_t)skip) {
			ret = n == -1 ? -errno : -ENODATA;
			goto out;
		}
		use = (size_t)n - skip < len ? (size_t)n - skip : (size_t)len;
		XXH3_64bits_update(st, (char *)buf + skip, use);
		off += n;
		len -= use;
		skip = 0;
	}
	*out = XXH3_64bits_digest(st);
out:
	free(buf);
	XXH3_freeState(st);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

int hash_fd(int fd, off_t off, uint64_t len, uint64_t *out)
{
	return hash_buffered(fd, off, len, out, NULL);
}

int hash_fd_until(int fd, off_t off, uint64_t len, bool direct,
		  const atomic_bool *stop, uint64_t *out)
{
	return (direct ? hash_direct : hash_buffered)(fd, off, len, out, stop);
}

uint64_t hash_zeros(uint64_t len)
{
	static const char zeros[65536];
	XXH3_state_t *st = XXH3_createState();
	uint64_t h;

	if (!st)
		abort();
	XXH3_64bits_reset(st);
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);

		XXH3_64bits_update(st, zeros, n);
		len -= n;
	}
	h = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return h;
}
