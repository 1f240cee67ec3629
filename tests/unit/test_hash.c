// SPDX-License-Identifier: MIT
/* Hashing files: hash_fd and hash_fd_until (through O_DIRECT too) agree with a
 * one-shot XXH3 of the same bytes, across mapped windows too; a stop request
 * ends a hash, and a file cut short while it is hashed is an error, not a
 * SIGBUS. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/hash.h"

/* Larger than two mapping windows, so a hash crosses them unaligned. */
#define BIG_LEN	((150ULL << 20) + 12345)
/* Long enough to hash that a truncation lands while it runs. */
#define CUT_LEN	(2ULL << 30)

struct cut_job {
	int fd;
	uint64_t hash;
	int ret;
	atomic_bool done;
};

static void *cut_hash(void *arg)
{
	struct cut_job *j = arg;

	j->ret = hash_fd(j->fd, 0, CUT_LEN, &j->hash);
	atomic_store(&j->done, true);
	return NULL;
}

/* A sparse file with data at both ends and across each window boundary. */
static void check_windows(void)
{
	char path[] = "/var/tmp/dnd-test-hash-big.XXXXXX";
	char *mem = calloc(1, BIG_LEN);
	static const uint64_t at[] = { 0, (64ULL << 20) - 3, (128ULL << 20) - 1,
				       BIG_LEN - 100 };
	uint64_t got = 0;
	int fd = mkstemp(path);
	size_t i, k;

	CHECK(fd >= 0 && mem && ftruncate(fd, (off_t)BIG_LEN) == 0,
	      "a sparse file of %llu bytes", (unsigned long long)BIG_LEN);
	if (fd < 0 || !mem)
		return;
	unlink(path);
	for (k = 0; k < sizeof(at) / sizeof(at[0]); k++)
		for (i = 0; i < 100; i++)
			mem[at[k] + i] = (char)(k * 31 + i + 1);
	for (k = 0; k < sizeof(at) / sizeof(at[0]); k++)
		if (pwrite(fd, mem + at[k], 100, (off_t)at[k]) != 100)
			CHECK(0, "pwrite");
	CHECK(hash_fd(fd, 7, BIG_LEN - 7, &got) == 0 &&
	      got == XXH3_64bits(mem + 7, BIG_LEN - 7),
	      "hash across mapping windows from an unaligned offset");
	CHECK(hash_fd(fd, (off_t)(64ULL << 20) + 1, 1 << 20, &got) == 0 &&
	      got == XXH3_64bits(mem + (64ULL << 20) + 1, 1 << 20),
	      "a range inside the file, not from 0");
	close(fd);
	free(mem);
}

/* Whether this process maps path at a file offset in [lo, hi). */
static bool mapped_at(const char *path, uint64_t lo, uint64_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long off;

		found = sscanf(line, "%*s %*s %llx", &off) == 1 &&
			strstr(line, path) && off >= lo && off < hi;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Cut the file while a window in its middle is mapped: the next page the
 * hash touches is past the end, which is SIGBUS for a mapping. Waiting for
 * the mapping also proves the mapped path ran, not the pread fallback.
 */
static void check_cut_short(void)
{
	char path[] = "/var/tmp/dnd-test-hash-cut.XXXXXX";
	struct cut_job j = { .fd = mkstemp(path) };
	pthread_t tid;
	bool seen = false;
	int i;

	if (j.fd < 0 || ftruncate(j.fd, (off_t)CUT_LEN)) {
		CHECK(0, "a sparse file to cut");
		return;
	}
	unlink(path);	/* /proc/self/maps names it "(deleted)" */
	if (pthread_create(&tid, NULL, cut_hash, &j)) {
		CHECK(0, "pthread_create");
		return;
	}
	/* 10 s at most; the whole hash takes well under a second. */
	for (i = 0; i < 100000 && !seen && !atomic_load(&j.done); i++) {
		seen = mapped_at(path, 64ULL << 20, CUT_LEN - (128ULL << 20));
		if (!seen)
			usleep(100);
	}
	if (seen && ftruncate(j.fd, 4096))
		CHECK(0, "ftruncate");
	pthread_join(tid, NULL);
	CHECK(seen, "the hash maps the file window by window");
	if (seen)
		CHECK(j.ret == -ENODATA, "a file cut short while hashed is "
		      "-ENODATA, not SIGBUS (%d)", j.ret);
	close(j.fd);
}

/* Not a regular file: the same hash through pread. */
static void check_not_regular(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	uint64_t got = 0;

	CHECK(fd >= 0 && hash_fd(fd, 0, (1 << 20) + 3, &got) == 0 &&
	      got == hash_zeros((1 << 20) + 3),
	      "a character device (/dev/zero) hashes through pread");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	char path[] = "/var/tmp/dnd-test-hash.XXXXXX";
	size_t len = (3u << 20) + 4097, i;
	char *data = malloc(len);
	atomic_bool stop = false;
	uint64_t want, got = 0;
	int fd = mkstemp(path), r;

	if (fd < 0 || !data)
		return DND_T_FAIL;
	unlink(path);
	for (i = 0; i < len; i++)
		data[i] = (char)(i * 2654435761u >> 13);
	if (write(fd, data, len) != (ssize_t)len)
		return DND_T_FAIL;
	want = XXH3_64bits(data + 5, len - 5);

	CHECK(hash_fd(fd, 5, len - 5, &got) == 0 && got == want,
	      "hash_fd from an unaligned offset");
	got = 0;
	CHECK(hash_fd_until(fd, 5, len - 5, false, &stop, &got) == 0 &&
	      got == want, "hash_fd_until, not stopped, the same");
	got = 0;
	r = hash_fd_until(fd, 5, len - 5, true, NULL, &got);
	if (r == -EINVAL || r == -EOPNOTSUPP)
		printf("# no O_DIRECT on /var/tmp: direct hashing not tried\n");
	else
		CHECK(r == 0 && got == want, "through O_DIRECT, the same");
	CHECK(hash_fd(fd, 0, len + 1, &got) == -ENODATA,
	      "a file shorter than asked is -ENODATA");
	atomic_store(&stop, true);
	CHECK(hash_fd_until(fd, 0, len, false, &stop, &got) == -ECANCELED,
	      "a stop request ends a hash with -ECANCELED");
	r = hash_fd_until(fd, 0, len, true, &stop, &got);
	CHECK(r == -ECANCELED || r == -EINVAL || r == -EOPNOTSUPP,
	      "and a direct one too (%d)", r);
	close(fd);
	free(data);
	check_windows();
	check_cut_short();
	check_not_regular();
	return CHECK_DONE();
}
