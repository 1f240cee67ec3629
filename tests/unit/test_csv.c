// SPDX-License-Identifier: MIT
/* csv_*: hostile fields come out exactly as RFC 4180 quotes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/csv.h"

/* One row of the given text fields, as the writer prints it. */
static char *row_of(const char *const *fields, unsigned int n)
{
	struct csv_row r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	unsigned int i;

	if (!f)
		return NULL;
	csv_row_begin(&r, f);
	for (i = 0; i < n; i++)
		csv_str(&r, fields[i]);
	csv_row_end(&r);
	fclose(f);
	return buf;
}

/* s with CR and LF shown as \r and \n, so a TAP line stays one line. */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; s && *s && o + 3 < len; s++) {
		if (*s == '\n' || *s == '\r') {
			buf[o++] = '\\';
			buf[o++] = *s == '\n' ? 'n' : 'r';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static void expect(const char *const *fields, unsigned int n, const char *want,
		   const char *what)
{
	char *got = row_of(fields, n);
	char a[256], b[256];

	CHECK(got && !strcmp(got, want), "%s: got [%s], want [%s]", what,
	      got ? shown(got, a, sizeof(a)) : "(no memory)",
	      shown(want, b, sizeof(b)));
	free(got);
}

int main(void)
{
	struct csv_row r;
	char *buf = NULL;
	size_t len = 0;
	char line[256];
	FILE *f;

	expect((const char *[]){ "plain", "two words", "" }, 3,
	       "plain,two words,\n", "plain text is not quoted");
	expect((const char *[]){ "use -m rw, splice or vmsplice" }, 1,
	       "\"use -m rw, splice or vmsplice\"\n",
	       "a comma is kept inside quotes (it used to become ';')");
	expect((const char *[]){ "say \"hi\"", "\"" }, 2,
	       "\"say \"\"hi\"\"\",\"\"\"\"\n", "quotes are doubled");
	expect((const char *[]){ "line 1\nline 2", "cr\rhere", "crlf\r\n" }, 3,
	       "\"line 1\nline 2\",\"cr\rhere\",\"crlf\r\n\"\n",
	       "CR and LF are kept, inside quotes");
	expect((const char *[]){ NULL, "a", NULL }, 3, ",a,\n",
	       "NULL is an empty field");
	expect((const char *[]){ ",\",\"\n," }, 1, "\",\"\",\"\"\n,\"\n",
	       "a field of nothing but separators and quotes");
	expect((const char *[]){ " spaced ", "tab\there", "ünïcode ±" }, 3,
	       " spaced ,tab\there,ünïcode ±\n",
	       "spaces, tabs and UTF-8 pass untouched");

	f = open_memstream(&buf, &len);
	CHECK(f != NULL, "open_memstream");
	if (!f)
		return CHECK_DONE();
	csv_row_begin(&r, f);
	csv_u64(&r, 18446744073709551615ULL);
	csv_i64(&r, -5);
	csv_f64(&r, true, 2497.7712);
	csv_f64(&r, false, 1);
	csv_f64(&r, true, NAN);
	csv_empty(&r, 2);
	csv_str(&r, "end");
	csv_row_end(&r);
	csv_row_begin(&r, f);
	csv_empty(&r, 3);
	csv_row_end(&r);
	fclose(f);
	CHECK(buf && !strcmp(buf, "18446744073709551615,-5,2497.77,,,,,end\n"
				  ",,\n"),
	      "numbers, missing ones and empty "
	      "fields: [%s]",
	      shown(buf, line, sizeof(line)));
	free(buf);
	return CHECK_DONE();
}
