// SPDX-License-Identifier: MIT
/* Pseudo-random filler for scratch files; see randfill.h. */
#include <sys/random.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/io.h"
#include "core/randfill.h"
#include "core/stats.h"

/* splitmix64: fast, and random enough that no layer can compress it. */
static uint64_t randfill_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int randfill_fd(int fd, uint64_t len)
{
	size_t chunk = 1 << 20, i;
	uint64_t seed = 0, *buf = malloc(chunk);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)stats_now() * 1000003ULL ^ (uint64_t)getpid();
	while (len && !r && !io_stop_signal) {
		size_t n = len < chunk ? (size_t)len : chunk;

		for (i = 0; i < chunk / 8; i++)
			buf[i] = randfill_next(&seed);
		r = io_write_all(&(struct dnd_syscalls){ 0 }, fd, buf, n);
		len -= n;
	}
	if (!r && io_stop_signal)
		r = -EINTR;
	free(buf);
	return r;
}
