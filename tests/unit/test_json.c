// SPDX-License-Identifier: MIT
/* The JSON encoder: strings always valid, file names exact (json_name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/json.h"

/* One object {KEY: ...} written by json_name (or json_str when len is
 * (size_t)-1), as text. The caller frees it. */
static char *emit(const char *key, const char *v, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	struct json j;

	if (!f)
		return NULL;
	json_begin(&j, f);
	if (len == (size_t)-1)
		json_str(&j, key, v);
	else
		json_name(&j, key, v, len);
	json_end(&j);
	fclose(f);
	return buf;
}

static void want(const char *key, const char *v, size_t len, const char *exp)
{
	char *got = emit(key, v, len);
	size_t n = got ? strlen(got) : 0;

	/* One JSON Line: the object, then a newline. */
	CHECK(n && got[n - 1] == '\n', "%s: ends in a newline", key);
	if (n)
		got[n - 1] = 0;
	CHECK(got && !strcmp(got, exp), "%s: got %s want %s", key,
	      got ? got : "(null)", exp);
	free(got);
}

int main(void)
{
	static const struct {
		const char *s;
		size_t n;
		int valid;
	} u8[] = {
		{ "plain", 5, 1 },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 1 },
		{ "\xef\xbf\xbd", 3, 1 },	/* U+FFFD itself */
		{ "\xf4\x8f\xbf\xbf", 4, 1 },	/* U+10FFFF */
		{ "a\0b", 3, 1 },
		{ "\xff", 1, 0 },
		{ "\x80", 1, 0 },		/* lone continuation */
		{ "\xc0\xaf", 2, 0 },		/* overlong '/' */
		{ "\xe0\x80\xaf", 3, 0 },	/* overlong */
		{ "\xed\xa0\x80", 3, 0 },	/* surrogate U+D800 */
		{ "\xf4\x90\x80\x80", 4, 0 },	/* past U+10FFFF */
		{ "\xf8\x88\x80\x80\x80", 5, 0 },	/* 5-byte form */
		{ "\xc3", 1, 0 },		/* cut short */
		{ "\xe2\x82", 2, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(u8) / sizeof(u8[0]); i++)
		CHECK(json_utf8_valid(u8[i].s, u8[i].n) == u8[i].valid,
		      "utf8 case %zu is %svalid", i, u8[i].valid ? "" : "in");

	/* Text: control characters escaped, UTF-8 kept, bad bytes U+FFFD. */
	want("s", "a\"b\\c\nd\te\x01\x1f\x7f", (size_t)-1,
	     "{\"s\":\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f\\u007f\"}");
	want("s", "caf\xc3\xa9", (size_t)-1, "{\"s\":\"caf\xc3\xa9\"}");
	want("s", "x\xffy\xc3", (size_t)-1, "{\"s\":\"x\\ufffdy\\ufffd\"}");
	want("s", NULL, (size_t)-1, "{\"s\":null}");

	/* Names: valid UTF-8 alone; otherwise the exact bytes in hex too. */
	want("name", "d\xc3\xa9j\xc3\xa0 \"q\"\\\n", 12,
	     "{\"name\":\"d\xc3\xa9j\xc3\xa0 \\\"q\\\"\\\\\\n\"}");
	want("name", "a\0b", 3, "{\"name\":\"a\\u0000b\"}");
	want("name", "n\xff\x01.img", 7,
	     "{\"name\":\"n\\ufffd\\u0001.img\","
	     "\"name_bytes_hex\":\"6eff012e696d67\"}");
	want("file", "\xed\xa0\x80", 3,
	     "{\"file\":\"\\ufffd\\ufffd\\ufffd\","
	     "\"file_bytes_hex\":\"eda080\"}");
	want("name", NULL, 0, "{\"name\":null}");
	return CHECK_DONE();
}
