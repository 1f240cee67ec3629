// SPDX-License-Identifier: MIT
/* core/esc.c: the one escaper of peer bytes for logs and terminals. */
#include <string.h>

#include "check.h"
#include "core/esc.h"

/* esc_text() of the NUL-terminated in equals want. */
static void expect(const char *in, size_t n, unsigned int flags,
		   const char *want, const char *what)
{
	char out[256];

	esc_text(out, sizeof(out), in, n, flags);
	CHECK(!strcmp(out, want), "%s: got '%s', want '%s'", what, out, want);
}

static void test_escapes(void)
{
	const char forged[] = "x\ndnd: session 1.2.3.4:5 push y -m rw: 9 "
			      "bytes in 1.000 s, verified\x1b[31m";

	expect(forged, strlen(forged), ESC_PEER,
	       "x\\ndnd: session 1.2.3.4:5 push y -m rw: 9 bytes in 1.000 s, "
	       "verified\\x1b[31m", "a forged line and an escape");
	expect("a\tb\rc\x7f", 6, 0, "a\\tb\\rc\\x7f", "tab, CR, DEL");
	expect("a\0b", 3, 0, "a\\x00b", "a NUL inside");
	expect("a\\b'c\"d", 7, ESC_PEER, "a\\\\b\\'c\\\"d",
	       "a peer's backslash and quotes");
	expect("a\\x41'", 6, 0, "a\\x41'", "a message's escapes stay");
	expect("caf\xc3\xa9", 5, 0, "caf\xc3\xa9", "UTF-8 stays");
	expect("caf\xc3\xa9", 5, ESC_ASCII, "caf\\xc3\\xa9",
	       "ESC_ASCII: UTF-8 escaped");
	expect("\xc2\x9b" "2J", 4, 0, "\\xc2\\x9b2J", "a C1 control (CSI)");
	expect("\x9b\xff\xc3", 3, 0, "\\x9b\\xff\\xc3",
	       "bytes of no valid sequence");
	expect("\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80", "a surrogate");
}

static void test_cut(void)
{
	char out[12];
	size_t n;

	n = esc_text(out, sizeof(out), "abcdefghijklmnop", 16, 0);
	CHECK(n == 11 && !strcmp(out, "abcdefgh..."), "cut: '%s'", out);
	n = esc_text(out, sizeof(out), "abcdefghijk", 11, 0);
	CHECK(n == 11 && !strcmp(out, "abcdefghijk"), "exact fit: '%s'", out);
	n = esc_text(out, sizeof(out), "abcdef\n\n\n", 9, 0);
	CHECK(!strcmp(out, "abcdef\\n..."), "never half an escape: '%s'",
	      out);
	n = esc_text(out, 1, "abc", 3, 0);
	CHECK(n == 0 && !out[0], "no room at all");
}

static void test_control(void)
{
	size_t at = 99;

	CHECK(!esc_has_control("caf\xc3\xa9/x y", 9, &at), "no control");
	CHECK(esc_has_control("ab\ncd", 5, &at) && at == 2, "a newline");
	CHECK(esc_has_control("ab\x7f", 3, &at) && at == 2, "DEL");
	CHECK(esc_has_control("a\x1b", 2, &at) && at == 1, "ESC");
}

int main(void)
{
	test_escapes();
	test_cut();
	test_control();
	return CHECK_DONE();
}
