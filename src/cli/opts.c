// SPDX-License-Identifier: MIT
/*
 * Strict option values. The 2006 program used strtoull(…, 0) and silently
 * ignored what it could not read ("64K" became 64); here anything not
 * understood is an error, so a typo can never turn into a different benchmark.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/net.h"
#include "cli/opts.h"

struct suffix {
	const char *name;
	uint64_t mult;
};

static const struct suffix suffixes[] = {
	{ "", 1 },
	{ "k", 1000ULL },
	{ "M", 1000ULL * 1000 },
	{ "G", 1000ULL * 1000 * 1000 },
	{ "T", 1000ULL * 1000 * 1000 * 1000 },
	{ "Ki", 1ULL << 10 },
	{ "Mi", 1ULL << 20 },
	{ "Gi", 1ULL << 30 },
	{ "Ti", 1ULL << 40 },
};

static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*end = p;
	*out = v;
	return 0;
}

int opt_parse_size(const char *s, uint64_t *out)
{
	const char *end;
	uint64_t v;
	size_t i;
	int ret;

	ret = parse_digits(s, &end, &v);
	if (ret)
		return ret;
	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(end, suffixes[i].name))
			continue;
		if (v && suffixes[i].mult > UINT64_MAX / v)
			return -ERANGE;
		*out = v * suffixes[i].mult;
		return 0;
	}
	return -EINVAL;
}

int opt_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int ret;

	ret = parse_digits(s, &end, &v);
	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int opt_parse_rate(const char *s, bool tc_only, uint64_t *bytes_per_s)
{
	static const struct { const char *unit; double mul; } units[] = {
		{ "bit", 1.0 / 8 }, { "kbit", 1e3 / 8 }, { "mbit", 1e6 / 8 },
		{ "gbit", 1e9 / 8 }, { "tbit", 1e12 / 8 }, { "bps", 1 },
		{ "kbps", 1e3 }, { "mbps", 1e6 }, { "gbps", 1e9 },
		{ "tbps", 1e12 },
	};
	double v = 0, scale = 1;
	const char *p = s;
	bool digits = false;
	size_t i;

	if (!tc_only && !opt_parse_size(s, bytes_per_s))
		return *bytes_per_s ? 0 : -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++, digits = true)
		v = v * 10 + (*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
			v += (*p - '0') * (scale /= 10);
	if (!digits || v <= 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcasecmp(p, units[i].unit)) {
			double b = v * units[i].mul;

			/* A petabyte per second is no rate: a typo. */
			if (b < 1 || b > 1e15)
				return -EINVAL;
			*bytes_per_s = (uint64_t)b;
			return 0;
		}
	}
	return -EINVAL;
}

int opt_parse_seconds(const char *s, double *out)
{
	const char *end;
	uint64_t whole, frac = 0;
	double scale = 1;
	int ret;

	ret = parse_digits(s, &end, &whole);
	if (ret)
		return ret;
	if (*end == '.') {
		const char *p = end + 1;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9' && scale < 1e9; p++) {
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
		end = p;
	}
	if (*end || whole > 86400 * 365)
		return *end ? -EINVAL : -ERANGE;
	*out = (double)whole + (double)frac / scale;
	return 0;
}

void opt_num_arg(const char *opt, const char *arg, bool size, uint64_t min,
		 uint64_t max, uint64_t *out, int *bad)
{
	int r = size ? opt_parse_size(arg, out) :
		       opt_parse_uint(arg, UINT64_MAX, out);

	if (r == -EINVAL && arg[0] == '-')
		log_err("%s '%s': %s cannot be negative", opt, arg,
			size ? "sizes" : "counts");
	else if (r == -EINVAL && size)
		log_err("%s '%s': not a size; use digits with an optional "
			"k M G (10^3..) or Ki Mi Gi (2^10..) suffix, e.g. 64Ki",
			opt, arg);
	else if (r == -EINVAL)
		log_err("%s '%s': not a number; use digits, e.g. 100", opt, arg);
	else if (r == -ERANGE || *out > max)
		log_err("%s '%s': too large (at most %llu)", opt, arg,
			(unsigned long long)max);
	else if (*out < min)
		log_err("%s '%s': too small (at least %llu)", opt, arg,
			(unsigned long long)min);
	else
		return;
	*out = min;	/* callers may look at it before giving up */
	(*bad)++;
}

void opt_seconds_arg(const char *opt, const char *arg, double *out, int *bad)
{
	if (opt_parse_seconds(arg, out)) {
		log_err("%s '%s': give seconds, e.g. 30 or 0.5", opt, arg);
		(*bad)++;
	}
}

void opt_hostport_arg(const char *opt, const char *arg, bool optional,
		      bool any_port, char *host, size_t hlen, uint16_t *port,
		      int *bad)
{
	char err[320];

	if (net_split_hostport(arg, optional, any_port, host, hlen, port, err,
			       sizeof(err))) {
		log_err("%s %s", opt, err);
		(*bad)++;
	}
}

const char *opt_fmt_size(uint64_t v, char *buf, unsigned int len)
{
	static const char *const bin[] = { "Ti", "Gi", "Mi", "Ki" };
	unsigned int i;

	for (i = 0; i < 4; i++) {
		uint64_t m = 1ULL << (10 * (4 - i));

		if (v && v % m == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(v / m),
				 bin[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}
