/* SPDX-License-Identifier: MIT */
/* Strict parsing of sizes and numbers given on the command line. */
#ifndef DND_OPTS_H
#define DND_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parses a size: decimal digits, then an optional suffix k M G T (powers of
 * 1000) or Ki Mi Gi Ti (powers of 1024), as in the 2006 program. Rejects an
 * empty string, a sign, trailing garbage, an unknown suffix and overflow.
 * Returns 0 and sets *out, or -EINVAL (malformed) or -ERANGE (overflow).
 */
int opt_parse_size(const char *s, uint64_t *out);

/* Parses a plain decimal number no larger than max. Returns as above. */
int opt_parse_uint(const char *s, uint64_t max, uint64_t *out);

/*
 * Parses a rate into bytes per second: a tc rate ("10gbit", "500mbit",
 * "1gbps": bit forms are bits, bps forms bytes, per second) or, unless
 * tc_only, a size per second ("200M": 200 MB/s, "1Gi"). Above 0; returns 0,
 * or -EINVAL.
 */
int opt_parse_rate(const char *s, bool tc_only, uint64_t *bytes_per_s);

/* Parses decimal seconds with an optional fraction ("2", "0.5"). */
int opt_parse_seconds(const char *s, double *out);

/*
 * An option's value, checked for a command line: a size (size=true) or a
 * plain count within [min, max] into *out, or seconds. A bad value prints
 * "dnd: OPT 'ARG': why, with an example" and adds one to *bad, so a parser
 * can report every problem before it gives up.
 */
void opt_num_arg(const char *opt, const char *arg, bool size, uint64_t min,
		 uint64_t max, uint64_t *out, int *bad);
void opt_seconds_arg(const char *opt, const char *arg, double *out, int *bad);
/* [HOST:]PORT or [V6]:PORT (HOST may be left out when optional; PORT 0,
 * any free one, only when any_port). */
void opt_hostport_arg(const char *opt, const char *arg, bool optional,
		      bool any_port, char *host, size_t hlen, uint16_t *port,
		      int *bad);

/* Formats bytes as the shortest exact suffix form ("64Ki", "1Mi", "1000"). */
const char *opt_fmt_size(uint64_t v, char *buf, unsigned int len);

#endif
