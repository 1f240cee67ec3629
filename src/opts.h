/* SPDX-License-Identifier: MIT */
/* Strict parsing of sizes and numbers given on the command line. */
#ifndef DND_OPTS_H
#define DND_OPTS_H

#include <stdint.h>

/*
 * Parses a size: decimal digits, then an optional suffix k M G T (powers of
 * 1000) or Ki Mi Gi Ti (powers of 1024), as in seed 000. Rejects an empty
 * string, a sign, trailing garbage, an unknown suffix and overflow.
 * Returns 0 and sets *out, or -EINVAL (malformed) or -ERANGE (overflow).
 */
int opt_parse_size(const char *s, uint64_t *out);

/* Parses a plain decimal number no larger than max. Returns as above. */
int opt_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* Parses decimal seconds with an optional fraction ("2", "0.5"). */
int opt_parse_seconds(const char *s, double *out);

/* Formats bytes as the shortest exact suffix form ("64Ki", "1Mi", "1000"). */
const char *opt_fmt_size(uint64_t v, char *buf, unsigned int len);

#endif
