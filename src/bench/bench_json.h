/* SPDX-License-Identifier: MIT */
/*
 * A strict reader for the JSON that `dnd send|recv --json` and iperf3 print:
 * the text must be exactly one valid JSON value. Scalars in objects are kept
 * by dotted path ("tcp.retransmits", "syscalls.read.calls"); arrays are
 * checked and skipped, since bench needs nothing inside them.
 */
#ifndef DND_BENCH_JSON_H
#define DND_BENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>

enum bjson_type {
	BJSON_NULL = 0,
	BJSON_BOOL,
	BJSON_NUM,
	BJSON_STR,
};

struct bjson_ent {
	size_t key;		/* offset of the dotted path in pool */
	size_t str;		/* offset of the decoded string (BJSON_STR) */
	double num;		/* number, or 1/0 for a bool */
	enum bjson_type type;
};

struct bjson {
	struct bjson_ent *ent;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
};

/*
 * Parses text[0..len) into j (which must be zeroed or freed). Returns 0, or
 * -EINVAL with the reason and byte offset in err, or -ENOMEM. On failure j
 * holds nothing; bjson_free() is still safe.
 */
int bjson_parse(struct bjson *j, const char *text, size_t len, char *err,
		size_t errlen);

void bjson_free(struct bjson *j);

/* The first entry at path, or NULL. */
const struct bjson_ent *bjson_get(const struct bjson *j, const char *path);

/* The dotted path of entry i (< j->n). */
const char *bjson_key(const struct bjson *j, size_t i);

/* A number (or bool) at path into *out: true, else false and *out kept. */
bool bjson_num(const struct bjson *j, const char *path, double *out);

/* A string at path, or NULL when absent, null or not a string. */
const char *bjson_str(const struct bjson *j, const char *path);

#endif
