// SPDX-License-Identifier: MIT
/* Hashing files: hash_fd and hash_fd_until (through O_DIRECT too) agree with a
 * one-shot XXH3 of the same bytes, and a stop request ends a hash. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/hash.h"

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
	return CHECK_DONE();
}
