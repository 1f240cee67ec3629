/* SPDX-License-Identifier: MIT */
/*
 * Confines client-given names beneath dnd serve's DIR with the kernel's
 * help (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
 * after strict checks of the name itself. No directory is ever created.
 */
#ifndef DND_CONFINE_H
#define DND_CONFINE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The served directory. */
struct dnd_confine {
	int dirfd;		/* O_PATH|O_DIRECTORY of DIR, or -1 */
	const char *dir;	/* DIR as given, for messages (not owned) */
};

/* Where a name lands: the parent directory and the final component. */
struct dnd_confined {
	int dirfd;		/* O_PATH|O_DIRECTORY of the parent; caller closes */
	char base[NAME_MAX + 1];	/* final component, NUL-terminated */
	bool exists;		/* a regular file of that name is there now */
};

/*
 * Opens DIR (O_PATH|O_DIRECTORY; dir is kept for messages and must outlive
 * c) and checks that this kernel has openat2. Returns 0; -ENOSYS when it
 * has not (dnd serve refuses to serve rather than check names by string);
 * or -errno with why. c->dirfd is -1 on failure.
 */
int confine_open(struct dnd_confine *c, const char *dir, char *why,
		 size_t len);

/* Closes DIR's fd; idempotent. */
void confine_close(struct dnd_confine *c);

/*
 * The pure checks on a name of len bytes (it need not be NUL-terminated;
 * a NUL inside is refused): not empty, no control character (a log line
 * or terminal must not be forged with one), shorter than PATH_MAX,
 * relative, no ".." component, no component longer than NAME_MAX, and a
 * file name at the end (not "", "." or a trailing "/"). Returns 0 or
 * -EINVAL with why quoting the name (escaped: core/esc.h).
 */
int confine_check_name(const char *name, size_t len, char *why,
		       size_t whylen);

/*
 * Resolves name for landing: checks it, opens its parent beneath DIR with
 * openat2 (no symlink anywhere, no escape), and looks at the final
 * component without following it. Returns 0 with t->dirfd (the caller
 * creates a temporary there and renameat2s it to t->base, race-free), or
 * -EINVAL (bad name), -ELOOP (a symlink on the path or at its end), -EXDEV
 * (escapes DIR), -ENOENT/-ENOTDIR (no such parent directory), -EISDIR or
 * -EINVAL (the name is a directory or another non-regular file), -ENOSYS,
 * or -errno; always with why. t->dirfd is -1 on failure.
 */
int confine_resolve(const struct dnd_confine *c, const char *name,
		    size_t len, struct dnd_confined *t, char *why,
		    size_t whylen);

/*
 * Opens name for a pull: confine_resolve(), then openat2 O_RDONLY of the
 * final component beneath its parent, and a check that what was opened is
 * the regular file that was looked at. Returns 0 with *fd (O_CLOEXEC,
 * blocking; the caller closes), -ENOENT when there is no such file, or the
 * errors of confine_resolve().
 */
int confine_open_read(const struct dnd_confine *c, const char *name,
		      size_t len, int *fd, char *why, size_t whylen);

/*
 * The free space on the filesystem of dirfd, the directory a file lands in
 * (fstatvfs: blocks available to this user; another filesystem may be
 * mounted under DIR), named where in messages. Sets *avail; returns 0 when
 * need bytes fit, -ENOSPC with why naming both figures when they do not,
 * or -errno.
 */
int confine_space(int dirfd, const char *where, uint64_t need,
		  uint64_t *avail, char *why, size_t len);

#endif
