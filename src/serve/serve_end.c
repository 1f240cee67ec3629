// SPDX-License-Identifier: MIT
/* dnd serve's scratch ends; see serve_end.h. */
#include <sys/random.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/randfill.h"
#include "serve/serve_end.h"

int serve_scratch_name(char *name, size_t cap)
{
	uint8_t r[8];
	int n;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return -EIO;
	n = snprintf(name, cap, SERVE_SCRATCH_PREFIX "%02x%02x%02x%02x%02x"
		     "%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5], r[6],
		     r[7]);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : n;
}

int serve_scratch_fill(const struct dnd_confine *c, uint64_t len, int *fd,
		       char *why, size_t whylen)
{
	uint64_t avail;
	int r;

	*fd = -1;
	r = confine_space(c->dirfd, "the served directory", len, &avail, why,
			  whylen);
	if (r)
		return r;
	*fd = openat(c->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (*fd == -1) {
		r = -errno;
		snprintf(why, whylen, "cannot make a scratch file in the "
			 "server's DIR (O_TMPFILE): %s", strerror(-r));
		return r;
	}
	r = randfill_fd(*fd, len);
	if (r) {
		snprintf(why, whylen, "cannot fill a scratch file of %llu "
			 "bytes in the server's DIR: %s",
			 (unsigned long long)len, strerror(-r));
		close(*fd);
		*fd = -1;
	}
	return r;
}
