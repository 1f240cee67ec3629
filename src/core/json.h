/* SPDX-License-Identifier: MIT */
/* A small typed JSON writer: no format strings, always valid output. */
#ifndef DND_JSON_H
#define DND_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DND_JSON_DEPTH 8

struct json {
	FILE *f;
	int depth;
	bool first[DND_JSON_DEPTH];
};

/* Starts the top-level object. */
void json_begin(struct json *j, FILE *f);
/* Ends the top-level object and writes a newline (one JSON Line). */
void json_end(struct json *j);

/* Nested object or array under key (key NULL inside an array). */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);

void json_str(struct json *j, const char *key, const char *v); /* NULL: null */
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_f64(struct json *j, const char *key, double v); /* NaN/inf: null */
void json_bool(struct json *j, const char *key, bool v);

#endif
