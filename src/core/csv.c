// SPDX-License-Identifier: MIT
/* RFC 4180 fields: quote only what needs it, never change a byte of text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/csv.h"

static void csv_sep(struct csv_row *r)
{
	if (!r->first)
		fputc(',', r->f);
	r->first = false;
}

void csv_row_begin(struct csv_row *r, FILE *f)
{
	r->f = f;
	r->first = true;
}

void csv_row_end(struct csv_row *r)
{
	fputc('\n', r->f);
	r->first = true;
}

void csv_str(struct csv_row *r, const char *s)
{
	csv_sep(r);
	if (!s)
		return;
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, r->f);
		return;
	}
	fputc('"', r->f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', r->f);
		fputc(*s, r->f);
	}
	fputc('"', r->f);
}

void csv_u64(struct csv_row *r, uint64_t v)
{
	csv_sep(r);
	fprintf(r->f, "%llu", (unsigned long long)v);
}

void csv_i64(struct csv_row *r, int64_t v)
{
	csv_sep(r);
	fprintf(r->f, "%lld", (long long)v);
}

void csv_f64(struct csv_row *r, bool have, double v)
{
	csv_sep(r);
	if (have && isfinite(v))
		fprintf(r->f, "%.6g", v);
}

void csv_empty(struct csv_row *r, unsigned int n)
{
	while (n--)
		csv_sep(r);
}
