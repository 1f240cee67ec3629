// SPDX-License-Identifier: MIT
/*
 * bench's JSON reader: every value type, dotted paths, escapes, numbers, and
 * hostile text that must fail cleanly. Each document is parsed from a buffer
 * of exactly its length, so an over-read shows under ASan.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "check.h"

static char err[128];

static int t_parse(struct bjson *j, const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);
	int r;

	if (!copy)
		exit(DND_T_FAIL);
	memcpy(copy, text, len);
	memset(j, 0, sizeof(*j));
	r = bjson_parse(j, copy, len, err, sizeof(err));
	free(copy);
	return r;
}

/* text[0..len) must be refused with -EINVAL, a reason and nothing kept. */
static void t_bad_len(const char *text, size_t len, const char *why)
{
	struct bjson j;
	int r = t_parse(&j, text, len);

	char shown[41];
	size_t i;

	for (i = 0; i < len && i < sizeof(shown) - 1; i++)
		shown[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
	shown[i] = '\0';
	CHECK(r == -EINVAL && strstr(err, why) && strstr(err, " at byte ") &&
	      !j.n && !j.ent && !j.pool, "refused %s: %s", shown, err);
	bjson_free(&j);
}

#define T_BAD(lit, why) t_bad_len(lit, sizeof(lit) - 1, why)

static const char t_doc[] =
	"{\"s\":\"hi\",\"n\":-12.5e2,\"i\":42,\"t\":true,\"f\":false,"
	"\"z\":null,\"o\":{\"a\":{\"b\":\"deep\"},\"e\":{}},"
	"\"arr\":[1,\"x\",{\"k\":1},[],null],\"after\":7,\"i\":43}";

static void t_types(void)
{
	struct bjson j;
	double v;

	CHECK(t_parse(&j, t_doc, sizeof(t_doc) - 1) == 0 && !err[0],
	      "every type parses");
	CHECK(j.n == 9 && !strcmp(bjson_key(&j, 0), "s") &&
	      !strcmp(bjson_key(&j, 6), "o.a.b") &&
	      !strcmp(bjson_key(&j, 7), "after"),
	      "9 scalars in document order, arrays skipped (n %zu)", j.n);
	CHECK(bjson_str(&j, "s") && !strcmp(bjson_str(&j, "s"), "hi"),
	      "string");
	CHECK(bjson_num(&j, "n", &v) && v == -1250.0, "number -12.5e2");
	CHECK(bjson_num(&j, "i", &v) && v == 42.0,
	      "duplicate key: the first one wins");
	CHECK(bjson_num(&j, "t", &v) && v == 1.0 &&
	      bjson_get(&j, "t")->type == BJSON_BOOL, "true is a bool 1");
	CHECK(bjson_num(&j, "f", &v) && v == 0.0, "false is 0");
	CHECK(bjson_get(&j, "z") && bjson_get(&j, "z")->type == BJSON_NULL &&
	      !bjson_str(&j, "z"), "null is kept, not a string");
	v = 5;
	CHECK(!bjson_num(&j, "z", &v) && v == 5, "null is no number");
	CHECK(!bjson_num(&j, "s", &v) && v == 5 && !bjson_str(&j, "i"),
	      "no cross-type reads");
	CHECK(bjson_str(&j, "o.a.b") && !strcmp(bjson_str(&j, "o.a.b"), "deep"),
	      "nested objects by dotted path");
	CHECK(!bjson_get(&j, "o") && !bjson_get(&j, "o.a") &&
	      !bjson_get(&j, "o.e"), "objects themselves are not entries");
	CHECK(!bjson_get(&j, "arr") && !bjson_get(&j, "arr.k") &&
	      !bjson_get(&j, "k") && bjson_num(&j, "after", &v) && v == 7,
	      "arrays skipped, parsing goes on after them");
	CHECK(!bjson_get(&j, "nope") && !bjson_num(&j, "nope", &v) &&
	      v == 7 && !bjson_str(&j, "nope") && !bjson_get(&j, "") &&
	      !bjson_get(&j, "s.x") && !bjson_get(&j, "o.a.b.c"),
	      "missing keys: NULL/false, *out kept");
	bjson_free(&j);
	bjson_free(&j);
	CHECK(!j.n && !j.ent && !j.pool, "free twice");
}

static void t_str_is(const char *doc, const char *path, const char *want)
{
	struct bjson j;
	const char *s;
	int r = t_parse(&j, doc, strlen(doc));

	s = r ? NULL : bjson_str(&j, path);
	CHECK(s && !strcmp(s, want), "%s decodes (%d %s)", doc, r, err);
	bjson_free(&j);
}

static void t_escapes(void)
{
	t_str_is("{\"e\":\"q\\\"b\\\\s\\/n\\nt\\tr\\rb\\bf\\f\"}", "e",
		 "q\"b\\s/n\nt\tr\rb\bf\f");
	t_str_is("{\"u\":\"\\u0041\\u00e9\\u20AC\"}", "u",
		 "A\xc3\xa9\xe2\x82\xac");
	t_str_is("{\"p\":\"<\\ud83d\\ude00>\"}", "p", "<\xf0\x9f\x98\x80>");
	t_str_is("{\"p\":\"\\uDBFF\\uDFFF\"}", "p", "\xf4\x8f\xbf\xbf");
	t_str_is("{\"a\\\"b\":\"k\"}", "a\"b", "k");
	t_str_is("{\"raw\":\"caf\xc3\xa9\"}", "raw", "caf\xc3\xa9");
	t_str_is("{\"empty\":\"\"}", "empty", "");
	/*
	 * Not asserted: "\u0000" decodes to a NUL inside the string (or key),
	 * so bjson_str() and bjson_get() see it cut short there.
	 */
	T_BAD("\"\\ude00\"", "lone low surrogate");
	T_BAD("\"\\ud83d\"", "high surrogate without a low one");
	T_BAD("\"\\ud83dx\"", "high surrogate without a low one");
	T_BAD("\"\\ud83d\\u0041\"", "bad low surrogate");
	T_BAD("\"\\ud83d\\ud83d\"", "bad low surrogate");
	T_BAD("[\"\\u12\"]", "bad hex digit");
	T_BAD("\"\\u12", "short \\u escape");
	T_BAD("\"\\uZZZZ\"", "bad hex digit");
	T_BAD("\"\\x\"", "unknown escape");
	T_BAD("\"\\", "unterminated escape");
	T_BAD("\"\\ud83d\\u", "short \\u escape");
	T_BAD("\"tab\there\"", "control character in string");
	T_BAD("\"line\nbreak\"", "control character in string");
}

static void t_num_is(const char *text, double want)
{
	struct bjson j;
	char doc[128];
	double v = NAN;
	int r;

	snprintf(doc, sizeof(doc), "{\"v\":%s}", text);
	r = t_parse(&j, doc, strlen(doc));
	CHECK(r == 0 && bjson_num(&j, "v", &v) &&
	      (v == want || (isinf(want) && isinf(v) && (v > 0) == (want > 0))),
	      "number %s = %g (%d %s)", text, v, r, err);
	bjson_free(&j);
}

static void t_numbers(void)
{
	char big[80];

	t_num_is("0", 0);
	t_num_is("-0", 0);
	t_num_is("-7", -7);
	t_num_is("0.5", 0.5);
	t_num_is("1E+3", 1000);
	t_num_is("1e-3", 1e-3);
	t_num_is("-1.5e-7", -1.5e-7);
	t_num_is("18446744073709551615", 18446744073709551615.0);
	t_num_is("1.7976931348623157e308", 1.7976931348623157e308);
	/* Beyond double: strtod's HUGE_VAL, kept as infinity. */
	t_num_is("1e999", INFINITY);
	t_num_is("-1e999", -INFINITY);
	memset(big, '9', 63);
	big[63] = '\0';
	t_num_is(big, 1e63);
	/* A 64-character number is valid JSON, refused by a fixed buffer. */
	memcpy(big, "{\"v\":", 5);
	memset(big + 5, '1', 64);
	big[69] = '}';
	t_bad_len(big, 70, "number too long");
	T_BAD("{\"v\":01}", "expected");
	T_BAD("-", "digit expected");
	T_BAD("-a", "digit expected");
	T_BAD("1.", "digit expected");
	T_BAD("1.e3", "digit expected");
	T_BAD("1e", "digit expected");
	T_BAD("1e+", "digit expected");
	T_BAD(".5", "unexpected character");
	T_BAD("+1", "unexpected character");
	T_BAD("0x10", "text after the JSON value");
	T_BAD("NaN", "unexpected character");
	T_BAD("Infinity", "unexpected character");
	T_BAD("tru", "unexpected character");
	T_BAD("nul", "unexpected character");
	T_BAD("True", "unexpected character");
	T_BAD("nullx", "text after the JSON value");
}

/* Every proper prefix of a valid document is refused. */
static void t_truncated(void)
{
	struct bjson j;
	size_t len = sizeof(t_doc) - 1, i, bad = 0;

	for (i = 0; i < len; i++) {
		if (t_parse(&j, t_doc, i) != -EINVAL || j.n || j.pool)
			bad++;
		bjson_free(&j);
	}
	CHECK(bad == 0, "all %zu truncations refused (%zu accepted)", len,
	      bad);
	T_BAD("", "value expected at byte 0");
	T_BAD(" \n\t\r", "value expected at byte 4");
	T_BAD("{\"a\":\"abc", "unterminated string");
	T_BAD("{\"a", "unterminated string");
	T_BAD("{\"a\"", "':' expected");
	T_BAD("{\"a\":", "value expected");
	T_BAD("{\"a\":1", "',' or '}' expected");
	T_BAD("[1", "',' or ']' expected");
}

static void t_grammar(void)
{
	static const char t_ws[] = " \t\r\n{ \"a\" : 1 , \"b\" : [ ] }\n";
	struct bjson j;
	char tiny[4];

	T_BAD("{\"a\" 1}", "':' expected");
	T_BAD("{\"a\":1 \"b\":2}", "',' or '}' expected");
	T_BAD("{\"a\":1,}", "object key expected");
	T_BAD("[1,]", "unexpected character");
	T_BAD("{a:1}", "object key expected");
	T_BAD("{1:1}", "object key expected");
	T_BAD("{'a':1}", "object key expected");
	T_BAD("{\"a\":tru}", "unexpected character at byte 5");
	T_BAD("{} x", "text after the JSON value at byte 3");
	T_BAD("{}}", "text after the JSON value");
	T_BAD("1 2", "text after the JSON value");
	T_BAD("[1]]", "text after the JSON value");
	CHECK(t_parse(&j, t_ws, sizeof(t_ws) - 1) == 0 && j.n == 1,
	      "white space everywhere it may go");
	bjson_free(&j);
	CHECK(t_parse(&j, "42", 2) == 0 && j.n == 0 &&
	      t_parse(&j, "\"s\"", 3) == 0 && j.n == 0 && !j.pool_len,
	      "a top-level scalar is valid and stores nothing");
	bjson_free(&j);
	memset(&j, 0, sizeof(j));
	CHECK(bjson_parse(&j, "{", 1, NULL, 0) == -EINVAL,
	      "no room for the reason: still -EINVAL");
	memset(&j, 0, sizeof(j));
	CHECK(bjson_parse(&j, "{", 1, tiny, sizeof(tiny)) == -EINVAL &&
	      strlen(tiny) == 3, "a small reason buffer is cut, terminated");
}

/* NUL bytes anywhere: refused, never taken for the end of the text. */
static void t_nul(void)
{
	t_bad_len("{\"a\":\"x\0y\"}", 11, "control character in string");
	t_bad_len("{\"a\0\":1}", 8, "control character in string");
	t_bad_len("{\"a\":1}\0", 8, "text after the JSON value at byte 7");
	t_bad_len("\0{}", 3, "unexpected character at byte 0");
	t_bad_len("{\"a\":\0}", 7, "unexpected character");
	t_bad_len("{\"a\":1\0}", 8, "',' or '}' expected");
	t_bad_len("\"\\\0\"", 4, "unknown escape");
	t_bad_len("{\"a\":-\0}", 8, "digit expected");
}

static void t_deep(void)
{
	size_t n = 100000, i;
	char *s = malloc(2 * n + 16);
	struct bjson j;

	if (!s)
		exit(DND_T_FAIL);
	memset(s, '[', 32);
	memset(s + 32, ']', 32);
	CHECK(t_parse(&j, s, 64) == 0, "32 nested arrays: the limit");
	bjson_free(&j);
	memset(s, '[', 33);
	memset(s + 33, ']', 33);
	t_bad_len(s, 66, "nested too deeply");
	memset(s, '[', n);
	t_bad_len(s, n, "nested too deeply");
	for (i = 0; i < 40; i++)
		memcpy(s + 5 * i, "{\"a\":", 5);
	t_bad_len(s, 5 * 40, "nested too deeply");
	free(s);
}

/* Long strings grow the pool; long key paths are refused, not cut. */
static void t_long(void)
{
	size_t n = 1 << 20;
	char *s = malloc(n + 64);
	struct bjson j;
	const char *v;

	if (!s)
		exit(DND_T_FAIL);
	memcpy(s, "{\"big\":\"", 8);
	memset(s + 8, 'x', n);
	memcpy(s + 8 + n, "\\n\",\"k\":1}", 10);
	CHECK(t_parse(&j, s, n + 18) == 0 && (v = bjson_str(&j, "big")) &&
	      strlen(v) == n + 1 && v[n] == '\n' && v[0] == 'x' &&
	      bjson_num(&j, "k", &(double){ 0 }), "1 MiB string value");
	bjson_free(&j);
	t_bad_len(s, n + 8, "unterminated string");
	memset(s, 0, n + 64);
	s[0] = '{';
	s[1] = '"';
	memset(s + 2, 'k', 200);
	memcpy(s + 202, "\":1}", 4);
	CHECK(t_parse(&j, s, 206) == 0 && j.n == 1 &&
	      strlen(bjson_key(&j, 0)) == 200, "200-byte key");
	bjson_free(&j);
	memset(s + 2, 'k', 300);
	memcpy(s + 302, "\":1}", 4);
	t_bad_len(s, 306, "key path too long");
	/* Short keys, deep: the 11th 24-byte key takes the path past 256. */
	for (int i = 0; i < 11; i++)
		memcpy(s + 28 * i, "{\"aaaaaaaaaaaaaaaaaaaaaaaa\":", 28);
	t_bad_len(s, 28 * 11, "key path too long");
	free(s);
}

int main(void)
{
	alarm(30);
	t_types();
	t_escapes();
	t_numbers();
	t_truncated();
	t_grammar();
	t_nul();
	t_deep();
	t_long();
	return CHECK_DONE();
}
