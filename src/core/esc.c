// SPDX-License-Identifier: MIT
/* One C-style escaper for every log line and message; see esc.h. */
#include <stdio.h>
#include <string.h>

#include "core/esc.h"

size_t esc_utf8_len(const unsigned char *p, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* The escape of the text at p (n >= 1 bytes) into piece (8 bytes of
 * room); returns the bytes it stands for. */
static size_t esc_piece(const unsigned char *p, size_t n, unsigned int flags,
			char *piece)
{
	size_t k = esc_utf8_len(p, n);

	if (k > 1 && !(flags & ESC_ASCII) && !(p[0] == 0xc2 && p[1] < 0xa0)) {
		memcpy(piece, p, k);
		piece[k] = 0;
		return k;
	}
	if (p[0] == '\n' || p[0] == '\t' || p[0] == '\r')
		snprintf(piece, 8, "\\%c", p[0] == '\n' ? 'n' :
			 p[0] == '\t' ? 't' : 'r');
	else if ((flags & ESC_PEER) && strchr("\\'\"", p[0]) && p[0])
		snprintf(piece, 8, "\\%c", p[0]);
	else if (p[0] >= 0x20 && p[0] < 0x7f)
		snprintf(piece, 8, "%c", p[0]);
	else
		snprintf(piece, 8, "\\x%02x", p[0]);
	return 1;
}

size_t esc_text(char *out, size_t cap, const char *in, size_t n,
		unsigned int flags)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t i, o = 0, k, w, dots = 0;
	char piece[8];

	if (!cap)
		return 0;
	/* When it will not fit, room for "..." as long as more is to come. */
	for (i = 0; i < n; i += k, o += strlen(piece))
		k = esc_piece(p + i, n - i, flags, piece);
	if (o >= cap)
		dots = 3;
	o = 0;
	for (i = 0; i < n;) {
		k = esc_piece(p + i, n - i, flags, piece);
		w = strlen(piece);
		if (o + w + (i + k < n ? dots : 0) >= cap)
			break;
		memcpy(out + o, piece, w);
		o += w;
		i += k;
	}
	if (i < n && o + 3 < cap) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
	return o;
}

bool esc_has_control(const char *s, size_t n, size_t *at)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			*at = i;
			return true;
		}
	}
	return false;
}
