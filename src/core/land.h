/* SPDX-License-Identifier: MIT */
/*
 * Safe landing of a received file: data goes to a temporary name in the
 * target's directory and is renamed onto the target only once verified.
 * With -o the target is rewritten in place (seed 000's rewrite case).
 * On failure nothing stays under the target's name.
 */
#ifndef DND_LAND_H
#define DND_LAND_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dnd_land {
	char *target;
	char *tmp;		/* NULL when writing in place */
	int fd;			/* -1 when closed */
	bool in_place;		/* -o */
	bool replaces;		/* a file existed under target (-t or -o) */
	dev_t dev;		/* and which one it was */
	ino_t ino;
};

/*
 * Checks, before any byte arrives, that the target can be landed: refuses an
 * existing target without overwrite/truncate (-EEXIST) and an unwritable
 * directory. Returns 0 or -errno with the reason and the fix in err.
 */
int land_check(const char *target, bool overwrite, bool truncate, char *err,
	       size_t len);

/* Opens the temporary file (or the target, in place, for -o) read-write.
 * A target that exists now without -t or -o is refused (-EEXIST).
 * Returns 0 or -errno with err set. */
int land_open(struct dnd_land *l, const char *target, bool overwrite,
	      bool truncate, char *err, size_t len);

/* Makes the data the target: truncates to size, gives the temporary file
 * the target's mode, renames it over the target and syncs the directory.
 * Closes the file either way; on failure call land_abort(). */
int land_commit(struct dnd_land *l, uint64_t size, char *err, size_t len);

/* Removes whatever was written; nothing stays under the target's name
 * (an existing target replaced with -t or -o is removed too). */
void land_abort(struct dnd_land *l);

/* Closes and frees without touching the file system (after commit). */
void land_free(struct dnd_land *l);

#endif
