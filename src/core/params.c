// SPDX-License-Identifier: MIT
/* The serve request (dnd serve's params); see params.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/be.h"
#include "core/params.h"

#define GIB (1ULL << 30)

static const char *const end_names[SERVE_END_COUNT] = {
	[SERVE_END_NAME] = "name",
	[SERVE_END_ZERO] = "zero",
	[SERVE_END_NULL] = "null",
	[SERVE_END_SCRATCH] = "scratch",
};

const char *params_end_name(unsigned int end)
{
	return end < SERVE_END_COUNT ? end_names[end] : NULL;
}

int params_end_find(const char *name)
{
	int i;

	for (i = SERVE_END_NAME + 1; i < SERVE_END_COUNT; i++)
		if (!strcmp(name, end_names[i]))
			return i;
	return -1;
}

size_t params_put(uint8_t *out, size_t cap, const struct serve_params *p)
{
	size_t mlen = strlen(p->method), need;
	uint8_t *q;

	need = SERVE_PARAMS_FIXED + mlen + p->name_len;
	if (!mlen || mlen > SERVE_METHOD_MAX || p->end >= SERVE_END_COUNT ||
	    !p->name_len != (p->end != SERVE_END_NAME) ||
	    p->name_len >= PATH_MAX || need > cap)
		return 0;
	memset(out, 0, SERVE_PARAMS_FIXED);
	out[0] = p->op;
	out[1] = p->flags;
	be_put16(out + 2, p->streams);
	out[4] = p->end;
	be_put64(out + 8, p->length);
	be_put64(out + 16, p->bsz);
	out[24] = (uint8_t)mlen;
	q = out + 25;
	memcpy(q, p->method, mlen);
	q += mlen;
	be_put16(q, (uint16_t)p->name_len);
	memcpy(q + 2, p->name, p->name_len);
	q[2 + p->name_len] = 0;
	return need;
}

/* The fixed fields' ranges. 0 or -EBADMSG. */
static int params_check(const struct serve_params *p, const uint8_t *in,
			char *why, size_t whylen)
{
	const char *bad = NULL;

	if (p->op != SERVE_PUSH && p->op != SERVE_PULL)
		bad = "unknown operation";
	else if (p->flags & ~(SERVE_PF_VERIFY | SERVE_PF_KNOWN))
		bad = "unknown flags";
	else if (p->end >= SERVE_END_COUNT)
		bad = "unknown special end";
	else if ((p->end == SERVE_END_ZERO && p->op != SERVE_PULL) ||
		 (p->end == SERVE_END_NULL && p->op != SERVE_PUSH))
		bad = "zero is a pull's end and null a push's";
	else if (p->op == SERVE_PULL && p->end == SERVE_END_NAME &&
		 p->flags & SERVE_PF_KNOWN)
		bad = "a pull of a named file declares no length";
	else if (p->op == SERVE_PULL && p->end != SERVE_END_NAME &&
		 !(p->flags & SERVE_PF_KNOWN))
		bad = "a pull from a special end needs its length";
	else if (!(p->flags & SERVE_PF_KNOWN) && p->length)
		bad = "a length without its flag";
	else if (!p->streams || p->streams > 64)
		bad = "stream count out of range";
	else if (!be_zeros(in + 5, 3))
		bad = "reserved bytes are not zero";
	else if (!p->bsz || p->bsz > GIB)
		bad = "buffer size out of range";
	if (!bad)
		return 0;
	snprintf(why, whylen, "malformed request: %s", bad);
	return -EBADMSG;
}

int params_get(const uint8_t *in, size_t len, struct serve_params *p,
	       char *why, size_t whylen)
{
	size_t mlen, nlen, i;
	const uint8_t *q;

	memset(p, 0, sizeof(*p));
	if (len < SERVE_PARAMS_FIXED + 2)
		goto short_msg;
	p->op = in[0];
	p->flags = in[1];
	p->streams = be_get16(in + 2);
	p->end = in[4];
	p->length = be_get64(in + 8);
	p->bsz = be_get64(in + 16);
	if (params_check(p, in, why, whylen))
		return -EBADMSG;
	mlen = in[24];
	if (!mlen || mlen > SERVE_METHOD_MAX ||
	    len < SERVE_PARAMS_FIXED + mlen)
		goto short_msg;
	for (i = 0; i < mlen; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-_",
			    in[25 + i]) || !in[25 + i])
			goto short_msg;
	memcpy(p->method, in + 25, mlen);
	q = in + 25 + mlen;
	nlen = be_get16(q);
	if (nlen >= PATH_MAX || len != SERVE_PARAMS_FIXED + mlen + nlen ||
	    q[2 + nlen])
		goto short_msg;
	if (!nlen != (p->end != SERVE_END_NAME)) {
		snprintf(why, whylen, "malformed request: %s", nlen ?
			 "a special end takes no name" : "an empty name");
		return -EBADMSG;
	}
	memcpy(p->name, q + 2, nlen);
	p->name_len = nlen;
	return 0;
short_msg:
	snprintf(why, whylen, "malformed request: lengths or method name "
		 "do not add up");
	return -EBADMSG;
}
