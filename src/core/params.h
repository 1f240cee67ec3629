/* SPDX-License-Identifier: MIT */
/*
 * What a dnd serve client asks for, carried in its request (wire.h: inside
 * TLS with a key): push or pull, the name beneath DIR, the
 * server end's method and buffer, the declared length, or instead of a
 * name one of the server's special ends (an enum, never a path). Strict.
 */
#ifndef DND_PARAMS_H
#define DND_PARAMS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Layout (big-endian), exactly 28 + method_len + name_len bytes:
 *   0  u8  op (enum serve_op)      1  u8  flags (SERVE_PF_*)
 *   2  u16 streams (1..64)         4  u8  end (enum serve_end)
 *   5  u8[3] zero
 *   8  u64 length (with SERVE_PF_KNOWN: a push's payload, or the bytes a
 *      pull from a special end sends; else 0)
 *  16  u64 buffer (bytes per call at the server's end, 1..1 GiB)
 *  24  u8  method_len (1..31), method name
 *      u16 name_len (1..PATH_MAX-1; 0 with a special end), name (not
 *      NUL-terminated)
 *      u8  zero
 */
#define SERVE_PARAMS_FIXED	28
#define SERVE_METHOD_MAX	31

enum serve_op {
	SERVE_PUSH = 1,		/* the client sends, the server lands */
	SERVE_PULL = 2,		/* the server sends a file beneath DIR */
};

/* The server's end of the transfer: a file the client names, or one of
 * these, which the server picks itself (no client-given path). */
enum serve_end {
	SERVE_END_NAME = 0,	/* DIR/name */
	SERVE_END_ZERO = 1,	/* pull: length bytes of /dev/zero */
	SERVE_END_NULL = 2,	/* push: /dev/null, the bytes are counted */
	SERVE_END_SCRATCH = 3,	/* a randomly named file beneath DIR that
				 * the server removes after the session;
				 * pull: length random bytes */
	SERVE_END_COUNT
};

#define SERVE_PF_VERIFY	(1u << 0)	/* the client hashes: verify */
#define SERVE_PF_KNOWN	(1u << 1)	/* push: length is the payload's */

struct serve_params {
	uint8_t op;
	uint8_t flags;
	uint16_t streams;
	uint8_t end;		/* enum serve_end */
	uint64_t length;
	uint64_t bsz;
	char method[SERVE_METHOD_MAX + 1];
	char name[PATH_MAX];	/* NUL-terminated after decoding */
	size_t name_len;	/* 0 with a special end */
};

/* "name", "zero", "null", "scratch"; NULL when out of range. */
const char *params_end_name(unsigned int end);

/* The enum value of a special end's name (not "name"), or -1. */
int params_end_find(const char *name);

/* Encodes p into out (cap bytes). Returns the length, or 0 when a field is
 * out of range or cap is too small. */
size_t params_put(uint8_t *out, size_t cap, const struct serve_params *p);

/* Decodes exactly len bytes. Returns 0, or -EBADMSG with the reason in
 * why (the name's own checks are confine_check_name()'s). */
int params_get(const uint8_t *in, size_t len, struct serve_params *p,
	       char *why, size_t whylen);

#endif
