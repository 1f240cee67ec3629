// SPDX-License-Identifier: MIT
/* libFuzzer: bench's strict JSON reader (bench_json.h) on text that is not
 * NUL-terminated: what it keeps is well-formed and found again by path,
 * whitespace after a value changes nothing, anything else after it fails. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

static void check_parsed(const struct bjson *j)
{
	size_t i;

	if (j->n > j->cap || j->pool_len > j->pool_cap)
		abort();
	for (i = 0; i < j->n; i++) {
		const struct bjson_ent *e = &j->ent[i], *first;
		const char *key = bjson_key(j, i);

		if (e->key >= j->pool_len || !memchr(key, 0, j->pool_len - e->key))
			abort();
		if (e->type == BJSON_STR && (e->str >= j->pool_len ||
		    !memchr(j->pool + e->str, 0, j->pool_len - e->str)))
			abort();
		/* The first entry at a path answers for it. */
		first = bjson_get(j, key);
		if (!first || first > e || strcmp(bjson_key(j, (size_t)
						  (first - j->ent)), key))
			abort();
		if (first == e && e->type == BJSON_STR &&
		    bjson_str(j, key) != j->pool + e->str)
			abort();
	}
}

/* Parses text + tail (not NUL-terminated) and returns the result. */
static int parse_with(const uint8_t *d, size_t size, const char *tail,
		      struct bjson *j, char *err, size_t errlen)
{
	size_t tl = strlen(tail);
	char *text = malloc(size + tl + 1);
	int r;

	if (!text)
		abort();
	memcpy(text, d, size);
	memcpy(text + size, tail, tl);
	r = bjson_parse(j, text, size + tl, err, errlen);
	free(text);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	struct bjson j = { 0 }, k = { 0 };
	size_t errlen = size % 7;	/* sometimes too small, even 0 */
	char *err = malloc(errlen ? errlen : 1), big[128];
	int r, r2;

	if (!err)
		abort();
	r = parse_with(d, size, "", &j, err, errlen);
	if (r && (r != -EINVAL && r != -ENOMEM))
		abort();
	if (r && (j.n || j.ent || j.pool || (errlen && !memchr(err, 0, errlen))))
		abort();
	free(err);
	if (r) {
		bjson_free(&j);
		return 0;
	}
	check_parsed(&j);
	r2 = parse_with(d, size, " \n\t\r", &k, big, sizeof(big));
	if (r2 || k.n != j.n || k.pool_len != j.pool_len ||
	    (j.pool_len && memcmp(k.pool, j.pool, j.pool_len)))
		abort();
	bjson_free(&k);
	if (!parse_with(d, size, "x", &k, big, sizeof(big)) || !big[0])
		abort();
	bjson_free(&k);
	bjson_free(&j);
	return 0;
}
