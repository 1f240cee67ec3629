/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's scratch ends (params.h SERVE_END_SCRATCH): names and files
 * the server makes itself beneath DIR, for `dnd bench --remote`.
 */
#ifndef DND_SERVE_END_H
#define DND_SERVE_END_H

#include <stddef.h>
#include <stdint.h>

#include "serve/confine.h"

#define SERVE_SCRATCH_PREFIX	"dnd-scratch-"

/*
 * A fresh name for a pushed scratch file at DIR's top: the prefix and 16
 * random hex digits, NUL-terminated. Returns its length, or -errno.
 */
int serve_scratch_name(char *name, size_t cap);

/*
 * A scratch source for a pull: an unnamed file (O_TMPFILE) in DIR holding
 * len random bytes, so nothing is left behind even if the session dies.
 * Checks free space first. Returns 0 with *fd (O_RDWR, O_CLOEXEC; the
 * caller closes), or -errno with why.
 */
int serve_scratch_fill(const struct dnd_confine *c, uint64_t len, int *fd,
		       char *why, size_t whylen);

#endif
