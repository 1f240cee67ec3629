/* SPDX-License-Identifier: MIT */
/*
 * What a SIGKILLed session leaves: the temporary file of a push that was
 * landing (land.h names it ".NAME.dnd-XXXXXX" beside the target). The
 * session cannot remove it once killed, so it records the file beforehand
 * in memory shared with the parent, which removes it when it reaps a
 * session that died with the record still set: beneath DIR through
 * confine_resolve() (the kernel resolves, never a string), and only the
 * very inode the session wrote.
 */
#ifndef DND_LITTER_H
#define DND_LITTER_H

#include <sys/types.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "serve/confine.h"

struct serve_litter {
	int set;			/* written last, cleared first */
	dev_t dev;
	ino_t ino;
	size_t name_len;
	char name[PATH_MAX];		/* the request's name, beneath DIR */
	char tmp[NAME_MAX + 1];		/* the temporary's final component */
};

/* The session's side: fd is open on the temporary file tmp (a path whose
 * last component is its name in the parent of name). 0 or -errno, with
 * nothing recorded. */
int litter_note(struct serve_litter *r, const char *name, size_t name_len,
		int fd, const char *tmp);

/* The session's side, once its landing is settled (landed or removed). */
void litter_clear(struct serve_litter *r);

/* The parent's side, for a session reaped with its record set: removes
 * that temporary if it is still the file recorded, and clears the record.
 * Returns 1 when a file was removed, 0 when there was none, or -errno. */
int litter_sweep(const struct dnd_confine *dir, struct serve_litter *r);

#endif
