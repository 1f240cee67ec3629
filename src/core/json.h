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

/* Every object dnd emits carries this schema version (docs/json.md). */
#define DND_JSON_SCHEMA 1

/* Starts the top-level object. */
void json_begin(struct json *j, FILE *f);
/*
 * Starts a top-level object with the fields every dnd object has: schema,
 * type (what the object is: "report", "bench_cell", ...), dnd_version, host,
 * kernel and time (ISO 8601, UTC, when the object was written).
 */
void json_begin_doc(struct json *j, FILE *f, const char *type);
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
/* raw is inserted as it is: the caller has checked it is one JSON value. */
void json_raw(struct json *j, const char *key, const char *raw);

#endif
