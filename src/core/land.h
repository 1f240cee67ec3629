/* SPDX-License-Identifier: MIT */
/*
 * Safe landing of a received file: data goes to a temporary name in the
 * target's directory and is renamed onto the target only once verified,
 * then the directory is fsynced. -t replaces an existing target (a symlink
 * itself, not what it points to) atomically at that rename, so a failure
 * leaves the old file exactly as it was; one that appeared during the
 * transfer is replaced too, and of concurrent landings the last wins. -o
 * rewrites a regular file in place (the 2006 program's rewrite case):
 * destructive by nature, so a failure removes it. Otherwise a failure leaves
 * nothing new under the name.
 */
#ifndef DND_LAND_H
#define DND_LAND_H

#include <sys/types.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What dnd puts beside a target NAME, each as "." NAME suffix: the
 * temporary file, the kept partial (--resume), its record, and the record
 * while it is written. The last is the longest, and so bounds NAME.
 */
#define LAND_TMP_SUFFIX		".dnd-XXXXXX"
#define LAND_PARTIAL_SUFFIX	".dnd-partial"
#define LAND_RECORD_SUFFIX	".info"
#define LAND_NEW_SUFFIX		".new"
#define LAND_LONGEST \
	"." "NAME" LAND_PARTIAL_SUFFIX LAND_RECORD_SUFFIX LAND_NEW_SUFFIX
#define LAND_NAME_EXTRA	(sizeof(LAND_LONGEST) - sizeof("NAME"))
#define LAND_NAME_MAX	(NAME_MAX - LAND_NAME_EXTRA)

struct dnd_land {
	char *target;
	const char *label;	/* target as messages name it (NULL: target);
				 * dnd serve's client knows no server path */
	char *tmp;		/* NULL when writing in place */
	int fd;			/* -1 when closed */
	bool in_place;		/* -o */
	bool replaces;		/* a file existed under target (-t or -o) */
	bool may_replace;	/* -t or -o: the rename replaces whatever is
				 * under target by then */
	bool landed;		/* renamed into place: nothing to undo */
	bool partial;		/* tmp is a kept partial file (--resume) */
	dev_t dev;		/* and which one it was */
	ino_t ino;
};

/*
 * Checks, before any byte arrives, that the target can be landed: refuses
 * anything under its name (lstat: a dangling symlink too) without
 * overwrite (-o) or truncate (-t) (-EEXIST), a symlink with -o alone
 * (-ELOOP), a directory, an unwritable directory, a pseudo file system
 * such as /proc and a name too long for land_check_name(). Returns 0 or -errno with the reason and the fix in err.
 */
int land_check(const char *target, bool overwrite, bool truncate, char *err,
	       size_t len);

/*
 * Checks that target's final component leaves room for every name dnd
 * puts beside it (LAND_NAME_MAX). Returns 0, or -ENAMETOOLONG with the
 * limit and the fix in err; the name itself is not quoted, so a client's
 * bytes never reach a log through it.
 */
int land_check_name(const char *target, char *err, size_t len);

/*
 * --direct: checks that target's directory takes O_DIRECT files (an
 * unnamed O_TMPFILE opened O_DIRECT; nothing appears). Returns 0, or
 * -EINVAL with the reason and the fix in err when its file system refuses
 * (ramfs, tmpfs before Linux 6.6). A file system without O_TMPFILE is
 * left to the transfer itself: 0.
 */
int land_check_direct(const char *target, char *err, size_t len);

/* Opens the temporary file (or the target, in place, for -o) read-write.
 * A target that exists now without -t or -o is refused (-EEXIST).
 * Returns 0 or -errno with err set. */
int land_open(struct dnd_land *l, const char *target, bool overwrite,
	      bool truncate, char *err, size_t len);

/*
 * Reserves len bytes of blocks for the open file (fallocate, size kept):
 * 0; -ENOSPC and the like with the cause in err; -EOPNOTSUPP when the
 * file system cannot reserve (err says the space is not reserved).
 */
int land_reserve(struct dnd_land *l, uint64_t off, uint64_t len, char *err,
		 size_t elen);

/* Makes the data the target: truncates to size (and syncs that), gives
 * the temporary file the target's permission bits (never its setuid,
 * setgid or sticky bit; -o drops those from the file it rewrote), renames
 * it over the target and fsyncs the directory. On a failure before the rename call land_abort();
 * a failed directory fsync comes after it: the file has landed, err says
 * so, and the return is -errno with nothing left to undo. */
int land_commit(struct dnd_land *l, uint64_t size, char *err, size_t len);

/* Removes whatever was written: the temporary file, and with -o the file
 * rewritten in place. A target that -t would have replaced stays. */
void land_abort(struct dnd_land *l);

/*
 * --resume. A failed transfer's data can be kept as ".NAME.dnd-partial"
 * beside the target with a record ".NAME.dnd-partial.info" of the source's
 * identity, its length and how many bytes from the start landed.
 *
 * land_open_resume() is land_open() that takes such a partial file as the
 * temporary file when its record names the same ident and length: *kept
 * is then the bytes it holds. Else *kept is 0 and, when something was
 * there, note says why it is started over and it is removed: a record of
 * another source, a damaged one or one that is no regular file (a FIFO
 * is never waited on), a partial shorter than its record, one that is no
 * regular file, has other links or belongs to another user.
 */
int land_open_resume(struct dnd_land *l, const char *target, bool truncate,
		     uint64_t ident, uint64_t length, uint64_t *kept,
		     char *note, size_t nlen, char *err, size_t len);

/* Empties the temporary file (the kept prefix turned out not to match). */
int land_restart(struct dnd_land *l);

/*
 * After a failure: keeps the first prefix bytes (synced) as the partial
 * file with its record, for land_open_resume() next time. 0, with l
 * closed and freed as by land_free(); or -errno with err set (-EEXIST:
 * another transfer landed the target meanwhile), l closed, then
 * land_abort() as usual. The record's temporary name is created with
 * O_EXCL: nothing planted there is written through.
 */
int land_keep(struct dnd_land *l, uint64_t ident, uint64_t length,
	      uint64_t prefix, char *err, size_t len);

/* Closes and frees without touching the file system (after commit). */
void land_free(struct dnd_land *l);

#endif
