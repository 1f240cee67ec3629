// SPDX-License-Identifier: MIT
/*
 * Typed JSON emitters; strings are escaped (always valid UTF-8 out), file
 * names kept exact beside them, non-finite numbers become null.
 */
#include <sys/utsname.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/esc.h"
#include "core/json.h"
#include "core/log.h"
#include "core/version.h"

static void json_key(struct json *j, const char *key);

bool json_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, k;

	for (i = 0; i < n; i += k)
		if (!(k = esc_utf8_len(p + i, n - i)))
			return false;
	return true;
}

/* n bytes of s as a JSON string: valid UTF-8 as it is, control characters
 * escaped, each byte of an invalid sequence as U+FFFD. */
static void json_esc(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, k;

	fputc('"', f);
	for (i = 0; i < n; i += k) {
		k = esc_utf8_len(p + i, n - i);
		if (!k) {
			fputs("\\ufffd", f);
			k = 1;
		} else if (p[i] == '"' || p[i] == '\\') {
			fprintf(f, "\\%c", p[i]);
		} else if (p[i] == '\n') {
			fputs("\\n", f);
		} else if (p[i] == '\t') {
			fputs("\\t", f);
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(f, "\\u%04x", p[i]);
		} else {
			fwrite(p + i, 1, k, f);
		}
	}
	fputc('"', f);
}

static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		json_esc(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void json_open(struct json *j, const char *key, char c)
{
	DND_BUG_ON(j->depth + 1 >= DND_JSON_DEPTH);
	json_key(j, key);
	fputc(c, j->f);
	j->first[++j->depth] = true;
}

void json_begin(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = true;
	fputc('{', f);
	j->first[++j->depth] = true;
}

void json_begin_doc(struct json *j, FILE *f, const char *type)
{
	struct utsname u;
	char when[32] = "";
	struct tm tm;
	time_t now = time(NULL);

	json_begin(j, f);
	json_u64(j, "schema", DND_JSON_SCHEMA);
	json_str(j, "type", type);
	json_str(j, "dnd_version", dnd_version());
	if (uname(&u) == -1)
		memset(&u, 0, sizeof(u));
	json_str(j, "host", u.nodename);
	json_str(j, "kernel", u.release);
	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_str(j, "time", when);
}

void json_end(struct json *j)
{
	DND_BUG_ON(j->depth != 1);
	fputs("}\n", j->f);
	j->depth = 0;
	fflush(j->f);
}

void json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_obj_end(struct json *j)
{
	fputc('}', j->f);
	j->depth--;
}

void json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_arr_end(struct json *j)
{
	fputc(']', j->f);
	j->depth--;
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	if (v)
		json_esc(j->f, v, strlen(v));
	else
		fputs("null", j->f);
}

void json_name(struct json *j, const char *key, const char *v, size_t len)
{
	char hexkey[64];
	size_t i;

	DND_BUG_ON(!key);
	json_key(j, key);
	if (!v) {
		fputs("null", j->f);
		return;
	}
	json_esc(j->f, v, len);
	if (json_utf8_valid(v, len))
		return;
	snprintf(hexkey, sizeof(hexkey), "%s_bytes_hex", key);
	json_key(j, hexkey);
	fputc('"', j->f);
	for (i = 0; i < len; i++)
		fprintf(j->f, "%02x", (unsigned char)v[i]);
	fputc('"', j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_f64(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_raw(struct json *j, const char *key, const char *raw)
{
	json_key(j, key);
	fputs(raw, j->f);
}
