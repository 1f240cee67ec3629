// SPDX-License-Identifier: MIT
/* libFuzzer: the strict option-value parsers (opts.h, and the HOST:PORT
 * splitter behind opt_hostport_arg): what they accept starts with a digit,
 * re-formats and re-parses to the same value, and stops being accepted
 * when anything is appended. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

static void fuzz_size(const char *s, const char *sx)
{
	uint64_t v, v2, u;
	char buf[32], buf2[32];
	int r = opt_parse_size(s, &v);

	if (r && r != -EINVAL && r != -ERANGE)
		abort();
	if (r)
		return;
	if (!digit(s[0]) || !opt_parse_size(sx, &v2))
		abort();
	opt_fmt_size(v, buf, sizeof(buf));
	if (opt_parse_size(buf, &v2) || v2 != v)
		abort();
	/* The shortest exact form is one form: formatting it again is a no-op. */
	if (strcmp(opt_fmt_size(v2, buf2, sizeof(buf2)), buf))
		abort();
	/* A plain number is also a size, of the same value. */
	if (!opt_parse_uint(s, UINT64_MAX, &u) && u != v)
		abort();
}

static void fuzz_uint(const char *s, const char *sx, uint64_t max)
{
	uint64_t v, v2;
	char buf[32];
	int r = opt_parse_uint(s, max, &v);

	if (r && r != -EINVAL && r != -ERANGE)
		abort();
	if (r == -ERANGE && !opt_parse_uint(s, UINT64_MAX, &v2) && v2 <= max)
		abort();
	if (r)
		return;
	if (!digit(s[0]) || v > max || !opt_parse_uint(sx, max, &v2))
		abort();
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	if (opt_parse_uint(buf, max, &v2) || v2 != v ||
	    opt_parse_size(s, &v2) || v2 != v)
		abort();
}

static void fuzz_seconds(const char *s, const char *sx)
{
	double v, v2;
	int r = opt_parse_seconds(s, &v);

	if (r && r != -EINVAL && r != -ERANGE)
		abort();
	if (r)
		return;
	if (!digit(s[0]) || !isfinite(v) || v < 0 || v > 86400.0 * 366 ||
	    !opt_parse_seconds(sx, &v2))
		abort();
}

/* HOST:PORT: the port is all digits, and host and port written back the
 * way a user would (brackets around an IPv6 address) split the same. */
static void fuzz_hostport(const char *s, size_t hlen, bool optional)
{
	char *host = malloc(hlen), host2[320], again[400], err[64];
	const char *colon = strrchr(s, ':'), *p;
	uint16_t port, port2;

	if (!host)
		abort();
	if (net_split_hostport(s, optional, false, host, hlen, &port, err,
			       sizeof(err))) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		free(host);
		return;
	}
	if (!port || !memchr(host, 0, hlen) || (!optional && !host[0]))
		abort();
	for (p = colon ? colon + 1 : s; *p; p++)
		if (!digit(*p))
			abort();
	snprintf(again, sizeof(again), strchr(host, ':') || host[0] == '[' ?
		 "[%s]:%u" : "%s:%u", host, port);
	if (net_split_hostport(again, optional, false, host2, sizeof(host2),
			       &port2, err, sizeof(err)) ||
	    strcmp(host, host2) || port != port2)
		abort();
	free(host);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	size_t n = strnlen((const char *)d, size);
	char *s = malloc(n + 1), *sx = malloc(n + 2);

	if (!s || !sx)
		abort();
	memcpy(s, d, n);
	s[n] = 0;
	memcpy(sx, s, n);
	sx[n] = 'x';
	sx[n + 1] = 0;
	fuzz_size(s, sx);
	fuzz_uint(s, sx, UINT64_MAX);
	fuzz_uint(s, sx, 65535);
	fuzz_uint(s, sx, size);
	fuzz_seconds(s, sx);
	fuzz_hostport(s, 1 + size % 300, size & 1);
	free(s);
	free(sx);
	return 0;
}
