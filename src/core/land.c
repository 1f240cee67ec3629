// SPDX-License-Identifier: MIT
/* Temporary file, verify, rename: see land.h. */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/land.h"

static char *land_dir(const char *target)
{
	char *copy = strdup(target), *dir;

	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

int land_check(const char *target, bool overwrite, bool truncate, char *err,
	       size_t len)
{
	struct stat st;
	char *dir;
	int r = 0;

	if (stat(target, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, len, "%s is a directory; name a file", target);
			return -EISDIR;
		}
		if (S_ISREG(st.st_mode) && !overwrite && !truncate) {
			snprintf(err, len, "%s exists; use -t to replace it or "
				 "-o to overwrite it in place", target);
			return -EEXIST;
		}
	}
	dir = land_dir(target);
	if (!dir) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	if (access(dir, W_OK | X_OK) == -1) {
		r = -errno;
		snprintf(err, len, "cannot write into directory %s: %s", dir,
			 strerror(errno));
	}
	free(dir);
	return r;
}

int land_open(struct dnd_land *l, const char *target, bool overwrite,
	      bool truncate, char *err, size_t len)
{
	struct stat st;
	char *dir, *base, *copy;
	int r;

	memset(l, 0, sizeof(*l));
	memset(&st, 0, sizeof(st));
	l->fd = -1;
	l->target = strdup(target);
	if (!l->target)
		goto nomem;
	/* Checked again: the file may have appeared while we waited. */
	l->replaces = stat(target, &st) == 0;
	if (l->replaces && !overwrite && !truncate) {
		snprintf(err, len, "%s appeared while waiting for the sender; "
			 "use -t to replace it or -o to overwrite it in place",
			 target);
		l->replaces = false;
		return -EEXIST;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (overwrite && l->replaces) {
		l->in_place = true;
		l->fd = open(target, O_RDWR | O_CLOEXEC);
		if (l->fd == -1)
			goto fail;
		return 0;
	}
	dir = land_dir(target);
	copy = strdup(target);
	if (!dir || !copy) {
		free(dir);
		free(copy);
		goto nomem;
	}
	base = basename(copy);
	if (asprintf(&l->tmp, "%s/.%s.dnd-XXXXXX", dir, base) == -1)
		l->tmp = NULL;
	free(dir);
	free(copy);
	if (!l->tmp)
		goto nomem;
	l->fd = mkostemp(l->tmp, O_CLOEXEC);
	if (l->fd == -1) {
		free(l->tmp);
		l->tmp = NULL;
		goto fail;
	}
	return 0;
fail:
	r = -errno;
	snprintf(err, len, "cannot create a file next to %s: %s", target,
		 strerror(errno));
	return r;
nomem:
	snprintf(err, len, "out of memory");
	return -ENOMEM;
}

static mode_t land_mode(const struct dnd_land *l)
{
	struct stat st;
	mode_t mask = umask(0);

	umask(mask);
	if (l->replaces && stat(l->target, &st) == 0)
		return st.st_mode & 07777;
	return 0666 & ~mask;
}

/*
 * Renames the temporary file onto the target. Without -t the target must
 * still not exist: a file that appeared meanwhile is never replaced.
 */
static int land_rename(struct dnd_land *l)
{
	if (l->replaces)
		return rename(l->tmp, l->target);
	if (renameat2(AT_FDCWD, l->tmp, AT_FDCWD, l->target,
		      RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	/* No RENAME_NOREPLACE on this file system: link() cannot replace. */
	if (link(l->tmp, l->target) == -1)
		return -1;
	unlink(l->tmp);
	return 0;
}

int land_commit(struct dnd_land *l, uint64_t size, char *err, size_t len)
{
	char *dir;
	int dfd;

	if (ftruncate(l->fd, (off_t)size) == -1)
		goto fail;
	if (l->in_place) {
		land_free(l);
		return 0;
	}
	if (fchmod(l->fd, land_mode(l)) == -1 || land_rename(l) == -1)
		goto fail;
	free(l->tmp);
	l->tmp = NULL;
	/* The rename is durable only once the directory is. */
	dir = land_dir(l->target);
	dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd != -1) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	land_free(l);
	return 0;
fail:
	snprintf(err, len, "cannot land %s: %s", l->target, strerror(errno));
	return -errno;
}

static void land_close(struct dnd_land *l)
{
	if (l->fd != -1)
		close(l->fd);
	l->fd = -1;
}

void land_abort(struct dnd_land *l)
{
	struct stat st;

	land_close(l);
	if (l->tmp)
		unlink(l->tmp);
	/* -o has written over it and -t asked for it to go: a stale or torn
	 * file under the target's name would be mistaken for the transfer.
	 * Only the very file that was checked, never one that came since. */
	if (l->replaces && l->target && stat(l->target, &st) == 0 &&
	    st.st_dev == l->dev && st.st_ino == l->ino)
		unlink(l->target);
	free(l->tmp);
	free(l->target);
	l->tmp = l->target = NULL;
}

void land_free(struct dnd_land *l)
{
	land_close(l);
	free(l->tmp);
	free(l->target);
	l->tmp = l->target = NULL;
}
