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

/* The secret: the file's bytes as they are, one trailing newline dropped;
 * key_tls_cfg() keeps only the PSK derived from them. */
struct dnd_key {
	size_t len;
	uint8_t bytes[DND_KEY_MAX];
	uint8_t psk[DND_TLS_PSK_LEN];
};

/*
 * Loads the key at path into k. Returns 0; -EPERM when another user than
 * the one dnd runs as owns the file (why names both and the fix "chown USER
 * FILE"), or group or others may read it (mode & 077: why names the file,
 * its mode and the fix "chmod 600 FILE"); -EINVAL when it is not a regular file, or its secret is
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
 * A missing last directory of path is made, mode 0700 (*made_dir says so;
 * removed again on failure); a deeper missing one is -ENOENT.
 */
int key_new(const char *path, bool *made_dir, char *why, size_t len);

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
 * Fills cfg for tls_open() from f: the PSK of f->key and the certificate
 * files (read by tls_open()). With any of them this process holds a secret
 * from now on, and is made undumpable (no core dump, no ptrace by its
 * user). The key file is read (key_load) into *k, memory of its own that
 * is locked and left out of core dumps (sodium_malloc), its bytes wiped
 * once the PSK is derived, and the page made read-only; NULL without
 * --key. Returns 0; -EINVAL when --cert, --cert-key and --ca are not all
 * given together; -ENOMEM; or key_load's error. why says which; *k is NULL
 * on failure. Free *k with key_free().
 */
int key_tls_cfg(const struct dnd_keyfiles *f, struct dnd_key **k,
		struct dnd_tls_cfg *cfg, char *why, size_t len);

/* Wipes and frees key_tls_cfg()'s key; NULL is fine. */
void key_free(struct dnd_key *k);

#endif
