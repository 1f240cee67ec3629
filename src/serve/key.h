/* SPDX-License-Identifier: MIT */
/*
 * The pre-shared key file: loading it (only when no one but its owner can
 * read it), making a fresh one (--new-key), and with the certificate files
 * the TLS settings of a keyed end (dnd serve, send, recv).
 */
#ifndef DND_KEY_H
#define DND_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tls.h"

#define DND_KEY_MIN	16	/* a shorter secret is refused */
#define DND_KEY_MAX	1024	/* a longer key file is refused */
#define DND_KEY_NEW_LEN	32	/* random bytes in a --new-key file, as hex */

/* The secret: the file's bytes as they are, one trailing newline dropped. */
struct dnd_key {
	size_t len;
	uint8_t bytes[DND_KEY_MAX];
};

/*
 * Loads the key at path into k. Returns 0; -EPERM when group or others may
 * read the file (mode & 077: why names the file, its mode and the fix
 * "chmod 600 FILE"); -EINVAL when it is not a regular file, or its secret is
 * shorter than DND_KEY_MIN or longer than DND_KEY_MAX bytes; or -errno from
 * open/read. Never blocks on a FIFO. k is wiped on failure.
 */
int key_load(const char *path, struct dnd_key *k, char *why, size_t len);

/*
 * Writes a fresh key to path: DND_KEY_NEW_LEN random bytes as lowercase hex
 * plus a newline, mode 0600. It is written to a temporary file beside path,
 * synced, and linked to path, so path appears whole or not at all and an
 * existing path (even a dangling symlink) is never replaced: -EEXIST. Other
 * failures return -errno with why naming the step; no temporary is left.
 */
int key_new(const char *path, char *why, size_t len);

/* Zeroes the secret in a way the compiler cannot drop. */
void key_wipe(struct dnd_key *k);

/* What authenticates a keyed end: --key, --cert, --cert-key, --ca. */
struct dnd_keyfiles {
	const char *key;	/* the key file: the external PSK */
	const char *cert, *cert_key, *ca;	/* mutual TLS */
};

/* True when any of them is given: the end runs keyed (TLS 1.3). */
bool key_files_given(const struct dnd_keyfiles *f);

/*
 * Loads f->key into k (key_load) and fills cfg for tls_open() with it and
 * the certificate files (read by tls_open()). Returns 0; -EINVAL when
 * --cert, --cert-key and --ca are not all given together; or key_load's
 * error. why says which.
 */
int key_tls_cfg(const struct dnd_keyfiles *f, struct dnd_key *k,
		struct dnd_tls_cfg *cfg, char *why, size_t len);

#endif
