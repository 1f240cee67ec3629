/* SPDX-License-Identifier: MIT */
/* What build this is: the version the Makefile stamps in, and its options. */
#ifndef DND_VERSION_H
#define DND_VERSION_H

/* "1.2.0" or "1.2.0-5-gabc1234" (git describe), or VERSION's content. */
const char *dnd_version(void);

/* The optional features compiled in, "liburing" or "" when none. */
const char *dnd_features(void);

#endif
