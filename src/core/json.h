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

/*
 * A string (NULL: null). Valid UTF-8 goes out as it is, with '"', '\\' and
 * control characters escaped; each byte that is not part of a valid
 * UTF-8 sequence becomes U+FFFD, so the output is always valid JSON.
 */
void json_str(struct json *j, const char *key, const char *v);
/*
 * A file name or path: len bytes of v (NUL-free or not) as json_str
 * writes them, and when they are not valid UTF-8 (so the text lost bytes)
 * also KEY_bytes_hex: every byte as two lowercase hex digits. Either the
 * text or the hex gives the exact bytes back (docs/json.md, "File names").
 * key must be shorter than 50 characters.
 */
void json_name(struct json *j, const char *key, const char *v, size_t len);
/* True when n bytes of s are well-formed UTF-8 (RFC 3629). */
bool json_utf8_valid(const char *s, size_t n);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_f64(struct json *j, const char *key, double v); /* NaN/inf: null */
void json_bool(struct json *j, const char *key, bool v);
/* raw is inserted as it is: the caller has checked it is one JSON value. */
void json_raw(struct json *j, const char *key, const char *raw);

#endif
