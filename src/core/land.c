// SPDX-License-Identifier: MIT
/* Temporary file, verify, rename: see land.h. */
#include <sys/stat.h>
#include <sys/statfs.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/io.h"
#include "core/land.h"

_Static_assert(sizeof(LAND_TMP_SUFFIX) < sizeof(LAND_LONGEST) - 1,
	       "the temporary name must not be the longest beside a target");

static char *land_dir(const char *target)
{
	char *copy = strdup(target), *dir;

	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

/* Pseudo file systems accept the name and fail every write later. */
static bool land_pseudo_fs(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) == -1)
		return false;
	return sf.f_type == 0x9fa0 /* proc */ ||
	       sf.f_type == 0x62656572 /* sysfs */ ||
	       sf.f_type == 0x64626720 /* debugfs */ ||
	       sf.f_type == 0x27e0eb /* cgroup */ ||
	       sf.f_type == 0x63677270 /* cgroup2 */;
}

/*
 * What is under the target's own name (lstat: a symlink is itself, dangling
 * or not) decides: nothing, or with -t anything but a directory, can be
 * landed; with -o only a regular file, since writing in place through a
 * link would leave the file it points to torn by a failure.
 */
static int land_check_target(const char *target, bool overwrite,
			     bool truncate, char *err, size_t len)
{
	struct stat st;

	if (lstat(target, &st) == -1)
		return 0;
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s is a directory; name a file", target);
		return -EISDIR;
	}
	if (S_ISLNK(st.st_mode) && overwrite) {
		snprintf(err, len, "%s is a symbolic link; -o would write "
			 "through it in place and a failure would leave the "
			 "file it points to torn; use -t to replace the link, "
			 "or name the file itself", target);
		return -ELOOP;
	}
	if (!overwrite && !truncate) {
		snprintf(err, len, "%s exists; use -t to replace it or "
			 "-o to overwrite it in place", target);
		return -EEXIST;
	}
	return 0;
}

int land_check(const char *target, bool overwrite, bool truncate, char *err,
	       size_t len)
{
	char *dir;
	int r;

	r = land_check_target(target, overwrite, truncate, err, len);
	if (!r)
		r = land_check_name(target, err, len);
	if (r)
		return r;
	dir = land_dir(target);
	if (!dir) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	if (access(dir, W_OK | X_OK) == -1) {
		r = -errno;
		snprintf(err, len, "cannot write into directory %s: %s", dir,
			 strerror(errno));
	} else if (land_pseudo_fs(dir)) {
		r = -EROFS;
		snprintf(err, len, "%s is on a pseudo file system (/proc, "
			 "/sys, ...) where no file can be landed; name a "
			 "file on a disk", target);
	}
	free(dir);
	return r;
}

int land_check_name(const char *target, char *err, size_t len)
{
	const char *base = strrchr(target, '/');
	size_t n = strlen(base ? base + 1 : target);

	if (n <= LAND_NAME_MAX)
		return 0;
	snprintf(err, len, "a file name of %zu bytes is too long: dnd keeps "
		 "%s beside it, so the limit is %zu bytes (NAME_MAX %d less "
		 "%zu); use a shorter name", n, LAND_LONGEST,
		 (size_t)LAND_NAME_MAX, NAME_MAX, LAND_NAME_EXTRA);
	return -ENAMETOOLONG;
}

int land_check_direct(const char *target, char *err, size_t len)
{
	char *dir = land_dir(target);
	int r;

	if (!dir) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	/* Unnamed: nothing appears, even for a moment. */
	r = io_check_direct(dir, O_TMPFILE | O_WRONLY, "land on a disk file "
			    "system", err, len);
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
	l->replaces = lstat(target, &st) == 0;
	if (l->replaces && !overwrite && !truncate) {
		snprintf(err, len, "%s appeared while waiting for the sender; "
			 "use -t to replace it or -o to overwrite it in place",
			 target);
		l->replaces = false;
		return -EEXIST;
	}
	if (l->replaces &&
	    (r = land_check_target(target, overwrite, truncate, err, len))) {
		l->replaces = false;
		return r;
	}
	l->may_replace = overwrite || truncate;
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
	if (asprintf(&l->tmp, "%s/.%s" LAND_TMP_SUFFIX, dir, base) == -1)
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

static void land_close(struct dnd_land *l);

/*
 * The landed file's mode: a replaced file's permission bits, else 0666
 * less the umask. Never setuid, setgid or sticky (07000): new content
 * under an old file's name must not run with that file's privileges.
 */
static mode_t land_mode(const struct dnd_land *l)
{
	struct stat st;
	mode_t mask = umask(0);

	umask(mask);
	if (l->may_replace && lstat(l->target, &st) == 0 &&
	    S_ISREG(st.st_mode))
		return st.st_mode & 0777;
	return 0666 & ~mask;
}

/* -o rewrote the file in place: its 07000 bits go, as land_mode's. The
 * kernel drops them at a write only when the writer lacks CAP_FSETID. */
static int land_drop_privs(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == -1)
		return -1;
	return st.st_mode & 07000 ? fchmod(fd, st.st_mode & 0777) : 0;
}

/*
 * Renames the temporary file onto the target. With -t (or -o) whatever is
 * under the name by now is replaced, even a file that appeared during the
 * transfer: the decision made at the start does not bind the rename.
 * Without, the target must still not exist: such a file is never replaced.
 */
static int land_rename(struct dnd_land *l)
{
	if (l->may_replace)
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

/* Makes the rename durable: the directory entry is data of the directory. */
static int land_sync_dir(const struct dnd_land *l)
{
	char *dir = land_dir(l->target);
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	int r = 0;

	if (dfd == -1 || fsync(dfd) == -1)
		r = dir ? -errno : -ENOMEM;
	if (dfd != -1)
		close(dfd);
	free(dir);
	return r;
}

/* The target as messages name it. */
static const char *land_shown(const struct dnd_land *l)
{
	return l->label ? l->label : l->target;
}

int land_reserve(struct dnd_land *l, uint64_t off, uint64_t len, char *err,
		 size_t elen)
{
	int r;

	do
		r = fallocate(l->fd, FALLOC_FL_KEEP_SIZE, (off_t)off,
			      (off_t)len);
	while (r == -1 && errno == EINTR);
	if (!r)
		return 0;
	r = -errno;
	if (r == -EOPNOTSUPP)
		snprintf(err, elen, "the file system cannot reserve space "
			 "(no fallocate): the %llu bytes were checked free, "
			 "not reserved", (unsigned long long)len);
	else
		snprintf(err, elen, "cannot reserve the declared %llu bytes "
			 "for %s: %s", (unsigned long long)len, land_shown(l),
			 strerror(-r));
	return r;
}

int land_commit(struct dnd_land *l, uint64_t size, char *err, size_t len)
{
	struct stat st;
	int r;

	/* A file longer than the data (an in-place rewrite of a longer
	 * file) is cut, and the cut made durable like the data was. */
	if (fstat(l->fd, &st) == -1)
		goto fail;
	if ((uint64_t)st.st_size != size &&
	    (ftruncate(l->fd, (off_t)size) == -1 || fdatasync(l->fd) == -1))
		goto fail;
	if (l->in_place) {
		if (land_drop_privs(l->fd) == -1)
			goto fail;
		l->landed = true;
		land_free(l);
		return 0;
	}
	if (fchmod(l->fd, land_mode(l)) == -1 || land_rename(l) == -1)
		goto fail;
	free(l->tmp);
	l->tmp = NULL;
	l->landed = true;
	r = land_sync_dir(l);
	if (r) {
		/* The file is there and verified; only its durability
		 * across a crash is in doubt. */
		snprintf(err, len, "landed %s, but fsync of its directory "
			 "failed: %s", land_shown(l), strerror(-r));
		land_free(l);
		return r;
	}
	land_free(l);
	return 0;
fail:
	r = -errno;
	if (r == -EEXIST && !l->replaces)
		snprintf(err, len, "%s appeared during the transfer (another "
			 "one landed it?); use -t to replace it",
			 land_shown(l));
	else
		snprintf(err, len, "cannot land %s: %s", land_shown(l),
			 strerror(-r));
	return r;
}

/* The partial file's name, or its record's with LAND_RECORD_SUFFIX. */
static char *land_partial_name(const char *target, const char *suffix)
{
	char *dir = land_dir(target), *copy = strdup(target), *name = NULL;

	if (dir && copy &&
	    asprintf(&name, "%s/.%s" LAND_PARTIAL_SUFFIX "%s", dir,
		     basename(copy), suffix) == -1)
		name = NULL;
	free(dir);
	free(copy);
	return name;
}

/* Removes a name that is not ours to keep: a file, a link, an empty
 * directory (one with something in it stays, and so does its content). */
static void land_remove(const char *path)
{
	if (unlink(path) == -1 && errno == EISDIR)
		rmdir(path);
}

/*
 * Reads a partial's record. O_NONBLOCK: a FIFO planted under its name
 * would block the open until a writer came. 0 with *prefix, -ESTALE when
 * it names another source, -ENOTTY when it is no regular file, else
 * -EBADMSG.
 */
static int land_read_record(const char *path, uint64_t ident,
			    uint64_t length, uint64_t *prefix)
{
	unsigned long long id, len, pre;
	char buf[160];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		  O_CLOEXEC);
	if (fd == -1)
		return errno == ELOOP ? -ENOTTY : -EBADMSG;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOTTY;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EBADMSG;
	buf[n] = '\0';
	if (sscanf(buf, "dnd-partial 1\nident %llx\nlength %llu\nprefix %llu\n",
		   &id, &len, &pre) != 3 || pre > len)
		return -EBADMSG;
	if (id != ident || len != length)
		return -ESTALE;
	*prefix = pre;
	return 0;
}

/*
 * Opens the kept partial file for writing, if it may be: only a regular
 * file of ours that no other name shares (the rest of the transfer would
 * land in that other file), holding at least what its record vouches
 * for. Returns the fd with *pre set, or -1 with the reason in why (empty
 * when there is no partial at all).
 */
static int land_take(const char *part, const char *info, uint64_t ident,
		     uint64_t length, uint64_t *pre, char *why, size_t wlen)
{
	struct stat st;
	int fd = -1, r;

	why[0] = '\0';
	*pre = 0;
	if (lstat(part, &st) == -1)
		return -1;
	/* A FIFO or a device is never opened: that alone can block. */
	if (S_ISREG(st.st_mode))
		fd = open(part, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			  O_CLOEXEC);
	if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
		snprintf(why, wlen, "is not a regular file");
	else if (st.st_nlink != 1)
		snprintf(why, wlen, "has %ju links, and writing it would "
			 "change the other files", (uintmax_t)st.st_nlink);
	else if (st.st_uid != geteuid())
		snprintf(why, wlen, "belongs to another user (uid %u)",
			 (unsigned int)st.st_uid);
	else if ((r = ident ? land_read_record(info, ident, length, pre) :
		  -ESTALE))
		snprintf(why, wlen, "%s", r == -ESTALE ? "is of another "
			 "source (size, time or inode differ)" :
			 r == -ENOTTY ? "has a record that is not a regular "
			 "file" : "is damaged or without its record");
	else if (!*pre)
		snprintf(why, wlen, "holds no bytes by its record");
	else if ((uint64_t)st.st_size < *pre)
		snprintf(why, wlen, "is shorter than its record says (%jd of "
			 "%ju bytes)", (intmax_t)st.st_size, (uintmax_t)*pre);
	/* Back to blocking I/O: io_uring would answer EAGAIN otherwise. */
	else if (fcntl(fd, F_SETFL, 0) == -1)
		snprintf(why, wlen, "cannot be set up: %s", strerror(errno));
	else
		return fd;
	if (fd != -1)
		close(fd);
	*pre = 0;
	return -1;
}

int land_open_resume(struct dnd_land *l, const char *target, bool truncate,
		     uint64_t ident, uint64_t length, uint64_t *kept,
		     char *note, size_t nlen, char *err, size_t len)
{
	char *part = land_partial_name(target, ""), *info;
	char why[128];
	struct stat st, at;
	uint64_t pre = 0;
	int r, fd = -1;

	*kept = 0;
	note[0] = '\0';
	info = land_partial_name(target, LAND_RECORD_SUFFIX);
	r = part && info ? 0 : -ENOMEM;
	if (!r) {
		fd = land_take(part, info, ident, length, &pre, why,
			       sizeof(why));
		if (why[0])
			snprintf(note, nlen, "the kept partial file %s %s; "
				 "starting over", part, why);
		/* A failure of this transfer keeps its own. */
		if (fd == -1) {
			land_remove(part);
			land_remove(info);
		}
	}
	r = r ? r : land_open(l, target, false, truncate, err, len);
	if (r || fd == -1)
		goto out;
	/* Our new temporary file gives way to the kept one, which must be
	 * the very file judged above (the name may have been swapped). */
	if (rename(part, l->tmp) == -1) {
		if (errno == ENOENT)
			snprintf(note, nlen, "the kept partial file %s was "
				 "taken up by another transfer; starting over",
				 part);
		else
			r = -errno;
	} else if (lstat(l->tmp, &at) == -1 || fstat(fd, &st) == -1 ||
		   at.st_dev != st.st_dev || at.st_ino != st.st_ino) {
		r = -ESTALE;
	} else {
		close(l->fd);
		l->fd = fd;
		fd = -1;
		l->partial = true;
		*kept = pre;
		unlink(info);
	}
	if (r)
		snprintf(err, len, "cannot take up %s: %s", part, r == -ESTALE ?
			 "it was replaced meanwhile" : strerror(-r));
out:
	if (fd != -1)
		close(fd);
	free(part);
	free(info);
	return r;
}

int land_restart(struct dnd_land *l)
{
	return ftruncate(l->fd, 0) == -1 ? -errno : 0;
}

/*
 * Writes the record next to the partial: a temporary name, then rename.
 * That name is removed first and created anew (O_EXCL, which follows no
 * symlink): whatever another user planted there is never written through.
 */
static int land_write_record(const char *info, uint64_t ident,
			     uint64_t length, uint64_t prefix)
{
	char *tmp = NULL;
	int r = 0, fd;

	if (asprintf(&tmp, "%s" LAND_NEW_SUFFIX, info) == -1)
		return -ENOMEM;
	land_remove(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd == -1) {
		r = -errno;
		free(tmp);
		return r;
	}
	if (dprintf(fd, "dnd-partial 1\nident %016llx\nlength %llu\n"
		    "prefix %llu\n", (unsigned long long)ident,
		    (unsigned long long)length,
		    (unsigned long long)prefix) < 0 || fsync(fd) == -1)
		r = -errno;
	if (close(fd) == -1 && !r)
		r = -errno;
	if (!r && rename(tmp, info) == -1)
		r = -errno;
	if (r)
		unlink(tmp);
	free(tmp);
	return r;
}

int land_keep(struct dnd_land *l, uint64_t ident, uint64_t length,
	      uint64_t prefix, char *err, size_t len)
{
	char *part = land_partial_name(l->target, "");
	char *info = land_partial_name(l->target, LAND_RECORD_SUFFIX);
	struct stat st;
	int r = part && info && l->tmp && l->fd != -1 ? 0 : -EINVAL;

	/* Another transfer landed the target meanwhile (this one lost the
	 * race to the rename): a partial of it would only be stale. */
	if (!r && !l->replaces && lstat(l->target, &st) == 0) {
		snprintf(err, len, "%s was landed by another transfer; "
			 "nothing kept for --resume", land_shown(l));
		r = -EEXIST;
		goto out;
	}
	/* The bytes first, then the record that vouches for them. */
	if (!r && (ftruncate(l->fd, (off_t)prefix) == -1 ||
		   fdatasync(l->fd) == -1))
		r = -errno;
	if (!r && rename(l->tmp, part) == -1)
		r = -errno;
	if (!r && (r = land_write_record(info, ident, length, prefix)))
		unlink(part);
	if (!r) {
		land_sync_dir(l);
		land_free(l);
	} else {
		snprintf(err, len, "cannot keep the partial file for "
			 "--resume: %s", strerror(-r));
	}
out:
	land_close(l);
	free(part);
	free(info);
	return r;
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
	/* -o has written over it: a torn file under the target's name would
	 * be mistaken for the transfer. Only the very file that was checked,
	 * never one that came since. -t replaces at the rename, so until
	 * then the old file is untouched and stays. */
	if (l->in_place && l->target && lstat(l->target, &st) == 0 &&
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
