// SPDX-License-Identifier: MIT
/* The serve request: round trips, the special ends' rules, and strict
 * refusal of every malformed encoding. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/params.h"

static struct serve_params req(uint8_t op, uint8_t end, const char *name)
{
	struct serve_params p = {
		.op = op, .streams = 1, .bsz = 65536, .end = end,
		.flags = SERVE_PF_VERIFY,
	};

	strcpy(p.method, "rw");
	p.name_len = strlen(name);
	memcpy(p.name, name, p.name_len);
	return p;
}

static void test_round_trip(void)
{
	struct serve_params p = req(SERVE_PUSH, SERVE_END_NAME, "a/b"), q;
	uint8_t buf[512];
	char why[256] = "";
	size_t n = params_put(buf, sizeof(buf), &p);

	CHECK(n == SERVE_PARAMS_FIXED + 2 + 3, "a named push encodes: %zu", n);
	CHECK(!params_get(buf, n, &q, why, sizeof(why)) &&
	      !strcmp(q.name, "a/b") && q.name_len == 3 && q.end == 0 &&
	      !strcmp(q.method, "rw") && q.bsz == 65536, "and decodes: %s", why);
	p = req(SERVE_PULL, SERVE_END_ZERO, "");
	p.flags |= SERVE_PF_KNOWN;
	p.length = 1 << 20;
	n = params_put(buf, sizeof(buf), &p);
	CHECK(n == SERVE_PARAMS_FIXED + 2 && buf[4] == SERVE_END_ZERO,
	      "a zero pull encodes without a name: %zu", n);
	CHECK(!params_get(buf, n, &q, why, sizeof(why)) &&
	      q.end == SERVE_END_ZERO && q.length == 1 << 20 && !q.name_len,
	      "and decodes with its length: %s", why);
}

static void test_put_refuses(void)
{
	struct serve_params p = req(SERVE_PUSH, SERVE_END_NULL, "x");
	uint8_t buf[512];

	CHECK(!params_put(buf, sizeof(buf), &p), "a special end with a name");
	p = req(SERVE_PUSH, SERVE_END_NAME, "");
	CHECK(!params_put(buf, sizeof(buf), &p), "a named end without one");
	p = req(SERVE_PUSH, SERVE_END_COUNT, "");
	CHECK(!params_put(buf, sizeof(buf), &p), "an end out of range");
}

/* Encodes p, lets edit change the bytes, expects a refusal naming want. */
static void refused(struct serve_params p, int off, int val, const char *want)
{
	struct serve_params q;
	uint8_t buf[512];
	char why[256] = "";
	size_t n = params_put(buf, sizeof(buf), &p);
	int r;

	if (off >= 0)
		buf[off] = (uint8_t)val;
	r = params_get(buf, n, &q, why, sizeof(why));
	CHECK(n && r == -EBADMSG && strstr(why, want), "refused (%s): %s",
	      want, why);
}

static void test_get_refuses(void)
{
	struct serve_params p = req(SERVE_PUSH, SERVE_END_NULL, "");

	refused(p, 4, SERVE_END_ZERO, "zero is a pull's end");
	refused(p, 4, SERVE_END_COUNT, "unknown special end");
	refused(p, 4, SERVE_END_NAME, "an empty name");
	refused(p, 5, 1, "reserved bytes");
	refused(p, 7, 1, "reserved bytes");
	p = req(SERVE_PULL, SERVE_END_SCRATCH, "");
	refused(p, -1, 0, "needs its length");
	p = req(SERVE_PUSH, SERVE_END_NAME, "f");
	refused(p, 4, SERVE_END_SCRATCH, "a special end takes no name");
	p = req(SERVE_PULL, SERVE_END_NAME, "f");
	p.flags |= SERVE_PF_KNOWN;
	p.length = 5;
	refused(p, -1, 0, "a pull of a named file declares no length");
	p = req(SERVE_PUSH, SERVE_END_NULL, "");
	refused(p, 0, 3, "unknown operation");
}

static void test_truncated(void)
{
	struct serve_params p = req(SERVE_PUSH, SERVE_END_NAME, "name"), q;
	uint8_t buf[512];
	char why[256];
	size_t n = params_put(buf, sizeof(buf), &p), i, bad = 0;

	for (i = 0; i < n; i++)
		bad += params_get(buf, i, &q, why, sizeof(why)) != -EBADMSG;
	CHECK(!bad, "every truncation refused (%zu accepted)", bad);
	CHECK(!strcmp(params_end_name(SERVE_END_SCRATCH), "scratch") &&
	      !params_end_name(SERVE_END_COUNT) &&
	      params_end_find("null") == SERVE_END_NULL &&
	      params_end_find("name") == -1, "end names both ways");
}

int main(void)
{
	test_round_trip();
	test_put_refuses();
	test_get_refuses();
	test_truncated();
	return CHECK_DONE();
}
