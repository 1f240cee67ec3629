/* SPDX-License-Identifier: MIT */
/* --key, --cert, --cert-key, --ca: declared once for dnd serve, send and
 * recv (and bench --remote's --key). */
#ifndef DND_OPT_KEYS_H
#define DND_OPT_KEYS_H

#include "cli/opt_parse.h"

struct dnd_keyfiles;

/* Entries with offsets into struct dnd_keyfiles: give the struct's place
 * as the part's base. */
extern const struct opt_def opt_keys[];

#endif
