// SPDX-License-Identifier: MIT
/* Typed JSON emitters; strings are escaped, non-finite numbers become null. */
#include <sys/utsname.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/json.h"
#include "core/log.h"
#include "core/version.h"

static void json_key(struct json *j, const char *key);

static void json_esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (key) {
		json_esc(j->f, key);
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
		json_esc(j->f, v);
	else
		fputs("null", j->f);
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
