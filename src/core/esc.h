/* SPDX-License-Identifier: MIT */
/*
 * Text that came from elsewhere (a peer's name or reason, a message quoting
 * one) made safe for a log line or a terminal: one C-style escaper for all
 * of dnd, and the UTF-8 reading it shares with json.c.
 */
#ifndef DND_ESC_H
#define DND_ESC_H

#include <stdbool.h>
#include <stddef.h>

/* A peer's string put into a message: '\\', '\'' and '"' are escaped too,
 * so the text decodes back to the exact bytes. Without it a backslash
 * stays as it is (the text may hold escapes already: a whole message). */
#define ESC_PEER	(1u << 0)
/* Printable ASCII out only: every other byte as \xNN (the wire's
 * reasons, which the peer checks are printable ASCII). */
#define ESC_ASCII	(1u << 1)

/*
 * n bytes of in as one line of text: printable ASCII and valid UTF-8 from
 * U+00A0 on as they are (ASCII only with ESC_ASCII); \n, \t, \r as in C;
 * every other byte (C0 controls such as ESC, DEL, C1 controls, a byte of
 * an invalid UTF-8 sequence) as \xNN. out is NUL-terminated; when cap is
 * too small the text is cut between two escapes and ends in "...".
 * Returns strlen(out).
 */
size_t esc_text(char *out, size_t cap, const char *in, size_t n,
		unsigned int flags);

/* The room esc_text() may need for n bytes: 4 out a byte, "..." and NUL. */
#define ESC_ROOM(n)	(4 * (n) + 4)

/*
 * Length of the well-formed UTF-8 sequence at p (at most n >= 1 bytes), or
 * 0: RFC 3629's table, so overlong forms, surrogates and code points past
 * U+10FFFF are refused as Python's and every strict decoder refuses them.
 */
size_t esc_utf8_len(const unsigned char *p, size_t n);

/* True when n bytes of s hold a C0 control character or DEL; *at is the
 * first one's offset. Names with them are refused (dnd serve, --to). */
bool esc_has_control(const char *s, size_t n, size_t *at);

#endif
