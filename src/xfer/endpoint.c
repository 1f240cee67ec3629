// SPDX-License-Identifier: MIT
/* Opening and classifying the file end of a transfer; see endpoint.h. */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/land.h"
#include "xfer/endpoint.h"

static bool is_dev(const struct stat *st, unsigned int maj, unsigned int min)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == maj &&
	       minor(st->st_rdev) == min;
}

/* A regular source from its current offset. */
static int endpoint_regular(struct endpoint *e, const struct stat *st,
			    bool has_limit, uint64_t limit, char *err,
			    size_t len)
{
	off_t at = lseek(e->fd, 0, SEEK_CUR);
	char c;

	e->ep = DND_EP_FILE;
	e->st = *st;
	e->start = at > 0 ? at : 0;
	/* /proc and /sys files say size 0 yet have data: their length is
	 * only known by reading them, like a pipe's. */
	if (st->st_size <= e->start && pread(e->fd, &c, 1, e->start) == 1) {
		snprintf(err, len, "%s says it is empty but has data (a "
			 "pseudo-file); send it as a stream: cat %s | dnd send "
			 "... -", e->file, e->file);
		return -EINVAL;
	}
	e->len = (uint64_t)(st->st_size > e->start ? st->st_size - e->start : 0);
	if (has_limit && limit < e->len)
		e->len = limit;
	return 0;
}

int endpoint_source(struct endpoint *e, const char *file, bool has_limit,
		    uint64_t limit, char *err, size_t len)
{
	struct stat st;
	int n;

	memset(e, 0, sizeof(*e));
	e->file = file;
	e->fd = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
	e->own_fd = e->fd > 0;
	if (e->fd == -1 || fstat(e->fd, &st) == -1) {
		snprintf(err, len, "cannot open %s: %s", file, strerror(errno));
		return -errno;
	}
	e->fmode = st.st_mode;
	e->known = true;
	if (S_ISREG(st.st_mode))
		return endpoint_regular(e, &st, has_limit, limit, err, len);
	e->ep = is_dev(&st, 1, 5) ? DND_EP_ZERO : DND_EP_STREAM;
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s is a directory; name a file", file);
		return -EISDIR;
	}
	if (has_limit) {
		e->len = limit;
		return 0;
	}
	if (e->ep == DND_EP_ZERO || ioctl(e->fd, FIONREAD, &n) == -1) {
		snprintf(err, len, "%s has no end that dnd can see; give -l "
			 "SIZE", file);
		return -EINVAL;
	}
	e->known = false;
	return 0;
}

int endpoint_sink(struct endpoint *e, const char *file, bool overwrite,
		  bool truncate, char *err, size_t len)
{
	struct stat st;
	int r;

	memset(e, 0, sizeof(*e));
	e->file = file;
	e->fd = -1;
	if (!strcmp(file, "-")) {
		e->fd = 1;
		if (fstat(1, &st) == -1) {
			snprintf(err, len, "standard output is closed");
			return -EBADF;
		}
		e->ep = DND_EP_STREAM;
		e->fmode = st.st_mode;
		return 0;
	}
	if (stat(file, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		/* A FIFO without a reader would block here, silently, before
		 * dnd even listens: ask without waiting. */
		e->fd = open(file, O_WRONLY | O_CLOEXEC |
			     (S_ISFIFO(st.st_mode) ? O_NONBLOCK : 0));
		if (e->fd == -1 && errno == ENXIO) {
			snprintf(err, len, "%s is a FIFO with no reader; start "
				 "its reader first (e.g. cat %s &)", file, file);
			return -ENXIO;
		}
		if (e->fd == -1) {
			snprintf(err, len, "cannot open %s: %s", file,
				 strerror(errno));
			return -errno;
		}
		if (S_ISFIFO(st.st_mode))
			fcntl(e->fd, F_SETFL, 0);
		e->own_fd = true;
		e->ep = is_dev(&st, 1, 3) ? DND_EP_NULL : DND_EP_STREAM;
		e->fmode = st.st_mode;
		return 0;
	}
	r = land_check(file, overwrite, truncate, err, len);
	if (r)
		return r;
	e->landing = true;
	e->ep = DND_EP_FILE;
	e->fmode = S_IFREG;
	return 0;
}

static bool endpoint_same_time(const struct timespec *a,
			       const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

int endpoint_changed(const struct endpoint *e, char *what, size_t len)
{
	static const char *const name[] = { "mtime", "ctime", "size" };
	struct stat now;
	bool diff[3];
	size_t at = 0;
	unsigned int i;

	if (e->ep != DND_EP_FILE)
		return 0;
	if (fstat(e->fd, &now) == -1)
		return -errno;
	/* st_dev and st_ino cannot change under an open descriptor: a file
	 * renamed over ours is not what we read. Ours then loses its link,
	 * which moves its ctime and no byte (dnd serve --replace, mv, an
	 * editor's save; a hard link, the same): the ctime counts, to catch
	 * a write whose mtime was set back, only while the links stay. */
	diff[0] = !endpoint_same_time(&now.st_mtim, &e->st.st_mtim);
	diff[1] = !endpoint_same_time(&now.st_ctim, &e->st.st_ctim) &&
		  now.st_nlink == e->st.st_nlink;
	diff[2] = now.st_size != e->st.st_size;
	if (len)
		what[0] = 0;
	for (i = 0; i < 3; i++)
		if (diff[i] && at < len)
			at += (size_t)snprintf(what + at, len - at, "%s%s",
					       at ? "/" : "", name[i]);
	return diff[0] || diff[1] || diff[2];
}

void endpoint_close(struct endpoint *e)
{
	if (e->own_fd && e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	e->own_fd = false;
}
