// SPDX-License-Identifier: MIT
/* Client names beneath dnd serve's DIR: string checks first, then openat2
 * resolution, so that the kernel, not a string, decides what is beneath.
 * What goes back to a client names DIR as "the served directory", never
 * by its path on the server. */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/esc.h"
#include "serve/confine.h"

#ifndef SYS_openat2
#define SYS_openat2 437		/* the same on every architecture */
#endif

#define CONFINE_RESOLVE \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define CONFINE_QUOTE	64	/* a name in a message: its escape is cut
				 * at 4 times this (ESC_ROOM) */

/* openat2 beneath dirfd with no symlinks. EAGAIN means a concurrent
 * rename touched the walk; retrying a few times is what the man page asks. */
static int confine_openat2(int dirfd, const char *path, uint64_t flags)
{
	struct open_how how = { .flags = flags, .resolve = CONFINE_RESOLVE };
	int tries = 8;
	long fd;

	do {
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	} while (fd == -1 && (errno == EAGAIN || errno == EINTR) && --tries);
	return (int)fd;
}

/* Checks each component: no "..", none longer than NAME_MAX. */
static int confine_check_parts(const char *name, size_t len, const char *q,
			       char *why, size_t whylen)
{
	const char *p = name, *end = name + len, *slash;
	size_t clen;

	while (p < end) {
		slash = memchr(p, '/', (size_t)(end - p));
		if (!slash)
			slash = end;
		clen = (size_t)(slash - p);
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			snprintf(why, whylen, "name '%s' has a '..' component",
				 q);
			return -EINVAL;
		}
		if (clen > NAME_MAX) {
			snprintf(why, whylen, "name '%s' has a component of %zu "
				 "bytes; the limit is %d (NAME_MAX)", q, clen,
				 NAME_MAX);
			return -EINVAL;
		}
		p = slash + 1;
	}
	return 0;
}

int confine_check_name(const char *name, size_t len, char *why,
		       size_t whylen)
{
	char q[ESC_ROOM(CONFINE_QUOTE)];
	const char *nul, *last;
	size_t at;

	if (!len) {
		snprintf(why, whylen, "empty name");
		return -EINVAL;
	}
	esc_text(q, sizeof(q), name, len, ESC_PEER);
	nul = memchr(name, '\0', len);
	if (nul) {
		snprintf(why, whylen, "name '%s' holds a NUL byte at offset %zu",
			 q, (size_t)(nul - name));
		return -EINVAL;
	}
	if (esc_has_control(name, len, &at)) {
		snprintf(why, whylen, "name '%s' holds a control character "
			 "(byte 0x%02x at offset %zu); names with control "
			 "characters are refused", q, (unsigned char)name[at],
			 at);
		return -EINVAL;
	}
	if (len >= PATH_MAX) {
		snprintf(why, whylen, "name of %zu bytes; the limit is %d "
			 "(PATH_MAX)", len, PATH_MAX - 1);
		return -EINVAL;
	}
	if (name[0] == '/') {
		snprintf(why, whylen, "name '%s' is absolute; names are "
			 "relative to the served directory", q);
		return -EINVAL;
	}
	if (confine_check_parts(name, len, q, why, whylen))
		return -EINVAL;
	last = memrchr(name, '/', len);
	last = last ? last + 1 : name;
	if (last == name + len || (last + 1 == name + len && *last == '.')) {
		snprintf(why, whylen, "name '%s' does not end in a file name",
			 q);
		return -EINVAL;
	}
	return 0;
}

/* Explains an openat2 failure on name; returns -err. */
static int confine_fail(const struct dnd_confine *c, int err, const char *q,
			char *why, size_t whylen)
{
	if (err == ELOOP)
		snprintf(why, whylen, "name '%s' crosses a symbolic link; dnd "
			 "serve follows none beneath the served directory", q);
	else if (err == EXDEV)
		snprintf(why, whylen, "name '%s' escapes the served directory",
			 q);
	else if (err == ENOENT)
		snprintf(why, whylen, "name '%s': no such directory beneath "
			 "the served directory (dnd serve creates none: create "
			 "'%.*s' beneath it on the server first)", q,
			 (int)(strrchr(q, '/') ? strrchr(q, '/') - q : 0), q);
	else if (err == ENOTDIR)
		snprintf(why, whylen, "name '%s': a component of its directory "
			 "is not a directory", q);
	else
		snprintf(why, whylen, "name '%s': openat2 beneath the served "
			 "directory: %s", q, strerror(err));
	return -err;
}

int confine_open(struct dnd_confine *c, const char *dir, char *why,
		 size_t len)
{
	int fd, err;

	c->dir = dir;
	c->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd == -1) {
		err = -errno;
		snprintf(why, len, "cannot open directory %s: %s", dir,
			 strerror(errno));
		return err;
	}
	fd = confine_openat2(c->dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd != -1) {
		close(fd);
		return 0;
	}
	err = -errno;
	if (err == -ENOSYS)
		snprintf(why, len, "this kernel has no openat2(2) (Linux 5.6 "
			 "and later); dnd serve confines names with it and "
			 "will not serve without it");
	else
		snprintf(why, len, "openat2 on %s: %s", dir, strerror(-err));
	confine_close(c);
	return err;
}

void confine_close(struct dnd_confine *c)
{
	if (c->dirfd != -1)
		close(c->dirfd);
	c->dirfd = -1;
}

/* Looks at the final component without following it: a regular file, or
 * nothing yet. Sets *exists. */
static int confine_stat_base(int dirfd, const char *base, bool *exists,
			     const char *q, char *why, size_t whylen)
{
	struct stat st;
	const char *what;

	*exists = false;
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, whylen, "name '%s': %s", q, strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode)) {
		*exists = true;
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, whylen, "name '%s' is a symbolic link; dnd serve "
			 "follows none", q);
		return -ELOOP;
	}
	what = S_ISDIR(st.st_mode) ? "a directory" :
	       S_ISFIFO(st.st_mode) ? "a FIFO" :
	       S_ISSOCK(st.st_mode) ? "a socket" : "a device";
	snprintf(why, whylen, "name '%s' is %s, not a regular file", q, what);
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

int confine_resolve(const struct dnd_confine *c, const char *name,
		    size_t len, struct dnd_confined *t, char *why,
		    size_t whylen)
{
	char path[PATH_MAX], q[ESC_ROOM(CONFINE_QUOTE)];
	const char *parent = ".";
	char *slash, *base = path;
	int err, fd;

	t->dirfd = -1;
	t->base[0] = '\0';
	t->exists = false;
	err = confine_check_name(name, len, why, whylen);
	if (err)
		return err;
	esc_text(q, sizeof(q), name, len, ESC_PEER);
	memcpy(path, name, len);
	path[len] = '\0';
	slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		parent = path;
		base = slash + 1;
	}
	fd = confine_openat2(c->dirfd, parent,
			     O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return confine_fail(c, errno, q, why, whylen);
	err = confine_stat_base(fd, base, &t->exists, q, why, whylen);
	if (err) {
		close(fd);
		return err;
	}
	/* confine_check_name() bounded it by NAME_MAX. */
	memcpy(t->base, base, strlen(base) + 1);
	t->dirfd = fd;
	return 0;
}

int confine_open_read(const struct dnd_confine *c, const char *name,
		      size_t len, int *fd, char *why, size_t whylen)
{
	char q[ESC_ROOM(CONFINE_QUOTE)];
	struct dnd_confined t;
	struct stat st;
	int err, f;

	*fd = -1;
	err = confine_resolve(c, name, len, &t, why, whylen);
	if (err)
		return err;
	esc_text(q, sizeof(q), name, len, ESC_PEER);
	err = -ENOENT;
	if (!t.exists) {
		snprintf(why, whylen, "name '%s': no such file in the served "
			 "directory", q);
		goto out;
	}
	/* O_NONBLOCK: if a FIFO was swapped in since the look, open must
	 * not hang on it; the fstat below then refuses it. */
	f = confine_openat2(t.dirfd, t.base, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			    O_NONBLOCK);
	if (f == -1) {
		err = confine_fail(c, errno, q, why, whylen);
		goto out;
	}
	if (fstat(f, &st) == -1 || !S_ISREG(st.st_mode) ||
	    fcntl(f, F_SETFL, 0) == -1) {
		snprintf(why, whylen, "name '%s' is no longer a regular file",
			 q);
		close(f);
		err = -EINVAL;
		goto out;
	}
	*fd = f;
	err = 0;
out:
	close(t.dirfd);
	return err;
}

int confine_space(int dirfd, const char *where, uint64_t need,
		  uint64_t *avail, char *why, size_t len)
{
	struct statvfs sv;

	if (fstatvfs(dirfd, &sv) == -1) {
		snprintf(why, len, "fstatvfs on %s: %s", where,
			 strerror(errno));
		return -errno;
	}
	*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (need <= *avail)
		return 0;
	snprintf(why, len, "the declared length of %llu bytes (%.1f MiB) does "
		 "not fit: the filesystem of %s has %llu bytes (%.1f MiB) free",
		 (unsigned long long)need, (double)need / (1 << 20), where,
		 (unsigned long long)*avail, (double)*avail / (1 << 20));
	return -ENOSPC;
}
