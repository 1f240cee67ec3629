// SPDX-License-Identifier: MIT
/*
 * Recursive-descent JSON reader for the reports bench collects from its
 * children. Strict on grammar (RFC 8259), lenient on nothing, bounded depth.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"

#define BJ_DEPTH	32
#define BJ_PATH		256

struct bj_parser {
	const char *s, *p, *end;
	struct bjson *j;
	char *err;
	size_t errlen;
	char path[BJ_PATH];
	size_t plen;
	int depth;
};

static int bj_value(struct bj_parser *ps, bool store);

static int bj_fail(struct bj_parser *ps, const char *what)
{
	snprintf(ps->err, ps->errlen, "%s at byte %zu", what,
		 (size_t)(ps->p - ps->s));
	return -EINVAL;
}

static void bj_ws(struct bj_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int bj_pool_put(struct bjson *j, const char *s, size_t n)
{
	if (j->pool_len + n + 1 > j->pool_cap) {
		size_t cap = j->pool_cap ? j->pool_cap : 1024;
		char *np;

		while (j->pool_len + n + 1 > cap)
			cap *= 2;
		np = realloc(j->pool, cap);
		if (!np)
			return -ENOMEM;
		j->pool = np;
		j->pool_cap = cap;
	}
	memcpy(j->pool + j->pool_len, s, n);
	j->pool_len += n;
	j->pool[j->pool_len] = '\0';
	return 0;
}

/* Appends code point cp as UTF-8. */
static int bj_put_utf8(struct bjson *j, uint32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return bj_pool_put(j, b, n);
}

static int bj_hex4(struct bj_parser *ps, uint32_t *cp)
{
	int i;

	*cp = 0;
	if (ps->end - ps->p < 4)
		return bj_fail(ps, "short \\u escape");
	for (i = 0; i < 4; i++, ps->p++) {
		char c = *ps->p;

		*cp <<= 4;
		if (c >= '0' && c <= '9')
			*cp |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*cp |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*cp |= (uint32_t)(c - 'A' + 10);
		else
			return bj_fail(ps, "bad hex digit in \\u escape");
	}
	return 0;
}

/* \uXXXX, with a following low surrogate when the first is a high one. */
static int bj_unicode(struct bj_parser *ps)
{
	uint32_t cp, lo;
	int r = bj_hex4(ps, &cp);

	if (r)
		return r;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return bj_fail(ps, "lone low surrogate");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
			return bj_fail(ps, "high surrogate without a low one");
		ps->p += 2;
		r = bj_hex4(ps, &lo);
		if (r)
			return r;
		if (lo < 0xdc00 || lo > 0xdfff)
			return bj_fail(ps, "bad low surrogate");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return bj_put_utf8(ps->j, cp);
}

static int bj_escape(struct bj_parser *ps)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k;

	if (ps->p >= ps->end)
		return bj_fail(ps, "unterminated escape");
	if (*ps->p == 'u') {
		ps->p++;
		return bj_unicode(ps);
	}
	k = strchr(from, *ps->p);
	if (!k || !*ps->p)
		return bj_fail(ps, "unknown escape");
	ps->p++;
	return bj_pool_put(ps->j, &to[k - from], 1);
}

/* Decodes a string (at its opening quote) into the pool; *off = its start. */
static int bj_string(struct bj_parser *ps, size_t *off)
{
	int r = 0;

	*off = ps->j->pool_len;
	if (bj_pool_put(ps->j, "", 0))
		return -ENOMEM;
	ps->p++;
	while (!r) {
		const char *q = ps->p;

		while (q < ps->end && *q != '"' && *q != '\\' &&
		       (unsigned char)*q >= 0x20)
			q++;
		r = bj_pool_put(ps->j, ps->p, (size_t)(q - ps->p));
		ps->p = q;
		if (r)
			break;
		if (q >= ps->end)
			return bj_fail(ps, "unterminated string");
		if (*q == '"') {
			ps->p++;
			ps->j->pool_len++;	/* keep the terminating NUL */
			return 0;
		}
		if (*q != '\\')
			return bj_fail(ps, "control character in string");
		ps->p++;
		r = bj_escape(ps);
	}
	return r;
}

static int bj_digits(struct bj_parser *ps)
{
	const char *q = ps->p;

	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	return ps->p > q ? 0 : bj_fail(ps, "digit expected");
}

static int bj_number(struct bj_parser *ps, double *v)
{
	const char *start = ps->p;
	char buf[64];
	int r;

	if (*ps->p == '-')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '0')
		ps->p++;
	else if ((r = bj_digits(ps)))
		return r;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if ((r = bj_digits(ps)))
			return r;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if ((r = bj_digits(ps)))
			return r;
	}
	if ((size_t)(ps->p - start) >= sizeof(buf))
		return bj_fail(ps, "number too long");
	memcpy(buf, start, (size_t)(ps->p - start));
	buf[ps->p - start] = '\0';
	*v = strtod(buf, NULL);
	return 0;
}

static int bj_store(struct bj_parser *ps, enum bjson_type t, double num,
		    size_t str)
{
	struct bjson *j = ps->j;
	struct bjson_ent *e;

	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64;
		struct bjson_ent *ne = realloc(j->ent, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		j->ent = ne;
		j->cap = cap;
	}
	e = &j->ent[j->n];
	e->key = j->pool_len;
	if (bj_pool_put(j, ps->path, ps->plen))
		return -ENOMEM;
	j->pool_len++;
	e->type = t;
	e->num = num;
	e->str = str;
	j->n++;
	return 0;
}

static int bj_literal(struct bj_parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return bj_fail(ps, "unexpected character");
	ps->p += n;
	return 0;
}

static int bj_member(struct bj_parser *ps, bool store)
{
	size_t keyoff, saved = ps->plen, klen;
	int r;

	if (ps->p >= ps->end || *ps->p != '"')
		return bj_fail(ps, "object key expected");
	r = bj_string(ps, &keyoff);
	if (r)
		return r;
	klen = strlen(ps->j->pool + keyoff);
	if (ps->plen + klen + 2 > sizeof(ps->path))
		return bj_fail(ps, "key path too long");
	if (ps->plen)
		ps->path[ps->plen++] = '.';
	memcpy(ps->path + ps->plen, ps->j->pool + keyoff, klen);
	ps->plen += klen;
	ps->path[ps->plen] = '\0';
	/* The key itself is not kept; only its dotted path is. */
	ps->j->pool_len = keyoff;
	bj_ws(ps);
	if (ps->p >= ps->end || *ps->p != ':')
		return bj_fail(ps, "':' expected");
	ps->p++;
	bj_ws(ps);
	r = bj_value(ps, store);
	ps->plen = saved;
	ps->path[saved] = '\0';
	return r;
}

/* An object ('{') or array ('['); arrays are validated, never stored. */
static int bj_container(struct bj_parser *ps, bool store)
{
	bool obj = *ps->p == '{';
	char close = obj ? '}' : ']';
	int r;

	if (++ps->depth > BJ_DEPTH)
		return bj_fail(ps, "nested too deeply");
	ps->p++;
	bj_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		ps->depth--;
		return 0;
	}
	for (;;) {
		r = obj ? bj_member(ps, store) : bj_value(ps, false);
		if (r)
			return r;
		bj_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			bj_ws(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == close)
			break;
		return bj_fail(ps, obj ? "',' or '}' expected" :
				   "',' or ']' expected");
	}
	ps->p++;
	ps->depth--;
	return 0;
}

static int bj_value(struct bj_parser *ps, bool store)
{
	enum bjson_type t;
	double num = 0;
	size_t str = 0, mark = ps->j->pool_len;
	int r;

	if (ps->p >= ps->end)
		return bj_fail(ps, "value expected");
	switch (*ps->p) {
	case '{':
	case '[':
		return bj_container(ps, store);
	case '"':
		t = BJSON_STR;
		r = bj_string(ps, &str);
		break;
	case 't':
	case 'f':
		t = BJSON_BOOL;
		num = *ps->p == 't';
		r = bj_literal(ps, num ? "true" : "false");
		break;
	case 'n':
		t = BJSON_NULL;
		r = bj_literal(ps, "null");
		break;
	default:
		if (*ps->p != '-' && (*ps->p < '0' || *ps->p > '9'))
			return bj_fail(ps, "unexpected character");
		t = BJSON_NUM;
		r = bj_number(ps, &num);
		break;
	}
	if (r)
		return r;
	if (!store || !ps->plen) {
		ps->j->pool_len = mark;	/* drop an unstored string */
		return 0;
	}
	return bj_store(ps, t, num, str);
}

void bjson_free(struct bjson *j)
{
	free(j->ent);
	free(j->pool);
	memset(j, 0, sizeof(*j));
}

int bjson_parse(struct bjson *j, const char *text, size_t len, char *err,
		size_t errlen)
{
	struct bj_parser ps = {
		.s = text, .p = text, .end = text + len, .j = j,
		.err = err, .errlen = errlen,
	};
	int r;

	if (errlen)
		err[0] = '\0';
	bj_ws(&ps);
	r = bj_value(&ps, true);
	if (!r) {
		bj_ws(&ps);
		if (ps.p != ps.end)
			r = bj_fail(&ps, "text after the JSON value");
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (r)
		bjson_free(j);
	return r;
}

const struct bjson_ent *bjson_get(const struct bjson *j, const char *path)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (!strcmp(j->pool + j->ent[i].key, path))
			return &j->ent[i];
	return NULL;
}

const char *bjson_key(const struct bjson *j, size_t i)
{
	return j->pool + j->ent[i].key;
}

bool bjson_num(const struct bjson *j, const char *path, double *out)
{
	const struct bjson_ent *e = bjson_get(j, path);

	if (!e || (e->type != BJSON_NUM && e->type != BJSON_BOOL))
		return false;
	*out = e->num;
	return true;
}

const char *bjson_str(const struct bjson *j, const char *path)
{
	const struct bjson_ent *e = bjson_get(j, path);

	return e && e->type == BJSON_STR ? j->pool + e->str : NULL;
}
