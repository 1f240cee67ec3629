// SPDX-License-Identifier: MIT
/*
 * Strict size, number and seconds parsing, and the generic option parser:
 * every type, ranges, every problem reported, aliases, roles, --help.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/opt_help.h"
#include "cli/opt_parse.h"
#include "cli/opts.h"
#include "xfer/method.h"

struct t_opts {
	bool flag, on;
	uint64_t size;
	unsigned int count, hinted, pipe;
	uint16_t port;
	double secs, pos;
	const char *str, *out;
	struct opt_addr addr, any;
	unsigned int word, bits;
	const struct dnd_method *m;
	uint64_t sizes[3];
	unsigned int nsizes;
	const struct dnd_method *ms[4];
	unsigned int nms;
	int calls;
	bool send_only, recv_only, told;
};

#define T struct t_opts

static int t_call(void *obj, const struct opt_def *d, const char *opt,
		  const char *arg)
{
	struct t_opts *o = obj;

	o->calls++;
	return strcmp(arg, "bad") ? 0 : (fprintf(stderr, "dnd: %s bad\n", opt), 1);
}

static const struct opt_word t_words[] = {
	{ "a", 1, "the first" },
	{ "b", 2, "the second" },
	{ NULL, 0, NULL },
};

static const struct opt_word t_bits[] = {
	{ "x", 1, NULL },
	{ "y", 4, NULL },
	{ "none", 0, NULL },
	{ NULL, 0, NULL },
};

static const struct opt_def t_table[] = {
	{ .name = "flag", .letter = 'f', .type = DND_OPT_FLAG, .group = "One",
	  .help = "a flag", OPT_AT(T, flag) },
	{ .name = "off", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .group = "One", .help = "clears on", OPT_AT(T, on) },
	{ .name = "size", .alias = "old-size", .letter = 's',
	  .type = DND_OPT_SIZE, .min = 1, .max = 1u << 30, .group = "One",
	  .help = "a size", OPT_AT(T, size) },
	{ .name = "count", .letter = 'n', .type = DND_OPT_COUNT, .min = 1,
	  .max = 10, .group = "One", .help = "a count", OPT_AT(T, count) },
	{ .name = "hinted", .type = DND_OPT_COUNT, .min = 1, .max = 9,
	  .hint = "give 1 to 9", .group = "One", .help = "with a hint",
	  OPT_AT(T, hinted) },
	{ .name = "pipe", .type = DND_OPT_SIZE, DND_OPT_PIPE_RANGE,
	  .group = "One", .help = "a pipe size", OPT_AT(T, pipe) },
	{ .name = "port", .type = DND_OPT_PORT, .group = "Two",
	  .help = "a port", OPT_AT(T, port) },
	{ .name = "secs", .type = DND_OPT_SECONDS, .group = "Two",
	  .help = "seconds", OPT_AT(T, secs) },
	{ .name = "pos", .type = DND_OPT_SECONDS, .flags = DND_OPT_F_POSITIVE,
	  .group = "Two", .help = "seconds above 0", OPT_AT(T, pos) },
	{ .name = "str", .type = DND_OPT_STRING, .group = "Two",
	  .help = "a string", OPT_AT(T, str) },
	{ .name = "out", .type = DND_OPT_STRING, .flags = DND_OPT_F_OPTARG,
	  .implied = "-", .metavar = "FILE", .group = "Two",
	  .help = "optional value", OPT_AT(T, out) },
	{ .name = "addr", .type = DND_OPT_HOSTPORT, .group = "Two",
	  .help = "host and port", OPT_AT(T, addr) },
	{ .name = "any", .type = DND_OPT_HOSTPORT, .flags = DND_OPT_F_ANYHOST,
	  .group = "Two", .help = "port, host optional", OPT_AT(T, any) },
	{ .name = "word", .type = DND_OPT_WORD, .words = t_words,
	  .group = "Three", .help = "one word:", OPT_AT(T, word) },
	{ .name = "bits", .type = DND_OPT_WORDS, .words = t_bits,
	  .noun = "bit", .group = "Three", .help = "words", OPT_AT(T, bits) },
	{ .name = "method", .letter = 'm', .type = DND_OPT_METHOD,
	  .group = "Three", .help = "a method", OPT_AT(T, m) },
	{ .name = "sizes", .type = DND_OPT_LIST, .elem = DND_OPT_SIZE,
	  .min = 1, .max = 1u << 20, .group = "Three", .help = "sizes",
	  OPT_ARRAY(T, sizes, nsizes) },
	{ .name = "meths", .type = DND_OPT_LIST, .elem = DND_OPT_METHOD,
	  .need = DND_ROLE_SEND, .group = "Three", .help = "send methods",
	  OPT_ARRAY(T, ms, nms) },
	{ .name = "call", .type = DND_OPT_CALL, .set = t_call,
	  .group = "Three", .help = "a setter" },
	{ .name = "send-only", .type = DND_OPT_FLAG, .roles = DND_ROLE_SEND,
	  .group = "Roles", .help = "for the sender", OPT_AT(T, send_only) },
	{ .name = "recv-only", .type = DND_OPT_FLAG, .roles = DND_ROLE_RECV,
	  .group = "Roles", .help = "for the receiver", OPT_AT(T, recv_only) },
	{ .name = "told", .type = DND_OPT_FLAG, .roles = DND_ROLE_RECV,
	  .misuse = "--told is for the receiver; say why", .group = "Roles",
	  .help = "with its own message", OPT_AT(T, told) },
	{ .name = NULL },
};

static const struct opt_part t_parts[] = {
	{ t_table, 0 },
	{ NULL, 0 },
};

/* The command's own check: sees the words left and the parsed values. */
static void t_check(struct opt_state *st, void *obj)
{
	const struct t_opts *o = obj;

	if (st->nargs && !strcmp(st->args[0], "reject") && o->flag) {
		fprintf(stderr, "dnd: rejected\n");
		st->bad++;
	}
}

static const struct opt_cmd t_cmd = {
	.name = "test", .usage = "dnd test [options]", .about = "Tests.",
	.parts = t_parts, .roles = DND_ROLE_SEND | DND_ROLE_RECV,
	.check = t_check,
};

static const struct opt_cmd t_send = {
	.name = "tsend", .usage = "dnd tsend", .about = "Sends.",
	.parts = t_parts, .roles = DND_ROLE_SEND,
};

static char t_err[8192];

/* Parses the NULL-terminated words with cmd into o; stderr into t_err. */
static int t_parse(const struct opt_cmd *cmd, struct t_opts *o,
		   struct opt_state *st, char **words)
{
	FILE *tmp = tmpfile(), *out = tmpfile();
	int argc = 0, r, saved = dup(2), saved1 = dup(1);
	size_t n;

	while (words[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	o->on = true;
	o->size = 65536;
	fflush(stdout);
	dup2(fileno(tmp), 2);
	dup2(fileno(out), 1);	/* --help and --version: not TAP */
	r = opt_parse(cmd, o, argc, words, st);
	fflush(stdout);
	dup2(saved, 2);
	dup2(saved1, 1);
	close(saved);
	close(saved1);
	fclose(out);
	rewind(tmp);
	n = fread(t_err, 1, sizeof(t_err) - 1, tmp);
	t_err[n] = '\0';
	fclose(tmp);
	return r;
}

#define PARSE(cmd, ...) t_parse(cmd, &o, &st, (char *[]){ "t", __VA_ARGS__, NULL })

static int t_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void t_every_type(void)
{
	struct opt_state st;
	struct t_opts o;
	int r;

	r = PARSE(&t_cmd, "-f", "--off", "--size", "64Ki", "-n", "5",
		  "--pipe", "0", "--port", "80", "--secs", "0.5", "--pos", "2",
		  "--str", "s", "--out", "--addr", "[::1]:80", "--any", "81",
		  "--word", "b", "--bits", "x,y", "-m", "splice", "--sizes",
		  "1,2Ki", "--meths", "rw,sendfile", "--call", "v", "pos1");
	CHECK(r == -1 && st.bad == 0 && !t_err[0], "every type parses");
	CHECK(o.flag && !o.on, "flag and negated flag");
	CHECK(o.size == 65536 && o.count == 5 && o.pipe == 0, "numbers");
	CHECK(o.port == 80 && o.secs == 0.5 && o.pos == 2, "port, seconds");
	CHECK(!strcmp(o.str, "s") && !strcmp(o.out, "-"), "strings, implied");
	CHECK(!strcmp(o.addr.host, "::1") && o.addr.port == 80 &&
	      !o.any.host[0] && o.any.port == 81, "host:port");
	CHECK(o.word == 2 && o.bits == 5, "word and words");
	CHECK(o.m == method_find("splice"), "method");
	CHECK(o.nsizes == 2 && o.sizes[0] == 1 && o.sizes[1] == 2048,
	      "size list");
	CHECK(o.nms == 2 && o.ms[1] == method_find("sendfile"), "method list");
	CHECK(o.calls == 1, "setter called");
	CHECK(st.nargs == 1 && !strcmp(st.args[0], "pos1"), "positional");
	CHECK(opt_given(&st, "size") && !opt_given(&st, "hinted"), "given");
	r = PARSE(&t_cmd, "--out=f", "--old-size", "1Mi", "--sizes", "7");
	CHECK(r == -1 && !strcmp(o.out, "f") && o.size == 1048576 &&
	      o.nsizes == 1 && o.sizes[0] == 7, "=value, alias, list replaced");
	r = PARSE(&t_cmd, "reject", "-f");
	CHECK(r == 2 && st.bad == 1 && strstr(t_err, "dnd: rejected\n"),
	      "the command's check runs after all options");
}

/* One option, one bad value: exactly one problem, with these words. */
static const struct {
	const char *opt, *arg, *want;
} t_bad[] = {
	{ "-n", "0", "dnd: -n '0': too small (at least 1)" },
	{ "--count", "11", "dnd: --count '11': too large (at most 10)" },
	{ "--hinted", "10", "dnd: --hinted '10': give 1 to 9" },
	{ "--hinted", "x", "dnd: --hinted 'x': not a number" },
	{ "--pipe", "1000", "--pipe '1000': a pipe holds at least one page "
	  "(4Ki)" },
	{ "--port", "0", "--port '0': a port is a number from 1 to 65535" },
	{ "--pos", "0", "--pos '0': give seconds above 0" },
	{ "--sizes", "1,2,3,4", "--sizes: at most 3 values" },
	{ "--sizes", "1,2Mi", "--sizes '2Mi': too large" },
	{ "--meths", "rw,null", "--meths: 'null' is not a send method" },
	{ "--word", "c", "--word 'c': use a or b" },
	{ "--bits", "x,z", "--bits: unknown bit 'z'; use x, y or none" },
	{ "--addr", "80", "--addr '80': give HOST:PORT" },
	/* fuzz_opts: strtoul() took blanks and a sign before the port. */
	{ "--addr", "h: 80", "--addr 'h: 80': the port must be a number" },
	{ "--any", " +80", "--any ' +80': the port must be a number" },
	{ "--any", "\v4", "the port must be a number from 1 to 65535" },
};

static void t_ranges(void)
{
	struct opt_state st;
	struct t_opts o;
	size_t i;

	for (i = 0; i < sizeof(t_bad) / sizeof(t_bad[0]); i++) {
		PARSE(&t_cmd, (char *)t_bad[i].opt, (char *)t_bad[i].arg);
		CHECK(st.bad == 1 && strstr(t_err, t_bad[i].want), "%s %s",
		      t_bad[i].opt, t_bad[i].arg);
	}
	PARSE(&t_cmd, "--pipe", "4Ki");
	CHECK(st.bad == 0 && o.pipe == 4096, "pipe of one page");
	PARSE(&t_cmd, "--pipe", "0");
	CHECK(st.bad == 0 && o.pipe == 0, "pipe 0: the kernel's");
}

static void t_every_error(void)
{
	struct opt_state st;
	struct t_opts o;
	int r;

	r = PARSE(&t_cmd, "-n", "0", "--size", "1x", "--frob", "--port", "x",
		  "-m", "turbo", "--call", "bad", "--secs");
	CHECK(r == 2 && st.bad == 7 && t_lines(t_err) == 8, "seven problems, "
	      "seven lines and where to look");
	CHECK(strstr(t_err, "dnd: unknown option '--frob'") &&
	      strstr(t_err, "dnd: --secs needs a value") &&
	      strstr(t_err, "unknown method 'turbo'") &&
	      strstr(t_err, "--size '1x': not a size"), "each named");
	CHECK(strstr(t_err, "dnd: see 'dnd test --help'"), "then --help");
}

static void t_roles(void)
{
	struct opt_state st;
	struct t_opts o;

	PARSE(&t_send, "--recv-only", "--send-only");
	CHECK(st.bad == 1 && !o.recv_only && o.send_only &&
	      strstr(t_err, "dnd: unknown option '--recv-only' for tsend; it "
	      "is for recv"), "other role refused");
	PARSE(&t_send, "--told");
	CHECK(st.bad == 1 && strstr(t_err, "dnd: --told is for the receiver; "
	      "say why"), "misuse text");
	PARSE(&t_cmd, "--recv-only", "--send-only");
	CHECK(st.bad == 0, "both roles: both accepted");
	CHECK(opt_check_role(&st, DND_ROLE_SEND) == 1 && st.bad == 1,
	      "then the role is known: one refused");
}

/* Runs opt_help for cmd into buf. */
static void t_help(const struct opt_cmd *cmd, char *buf, size_t len)
{
	struct t_opts o = { .size = 65536, .word = 2 };
	FILE *f = tmpfile();
	size_t n;

	opt_help(cmd, &o, f);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void t_help_text(void)
{
	static char h[16384];
	struct opt_state st;
	struct t_opts o;
	const char *one, *two;

	t_help(&t_send, h, sizeof(h));
	CHECK(strstr(h, "--send-only") && !strstr(h, "--recv-only") &&
	      !strstr(h, "--told"), "help lists only the role's options");
	one = strstr(h, "\nOne:\n");
	two = strstr(h, "\nTwo:\n");
	CHECK(one && two && one < two && strstr(h, "\nRoles:\n"), "grouped");
	CHECK(strstr(h, "  -s, --size SIZE         a size (default 64Ki); "
	      "--old-size is the same"), "default and alias shown");
	CHECK(strstr(h, "--word a|b          one word (default b):\n"
	      "      a  the first"), "words listed");
	CHECK(strstr(h, "--out[=FILE]"), "optional value shown");
	t_help(&t_cmd, h, sizeof(h));
	CHECK(strstr(h, "[send only] for the sender") &&
	      strstr(h, "[recv only] for the receiver"), "both roles: tagged");
	CHECK(PARSE(&t_cmd, "--help") == 0, "--help: exit 0");
	CHECK(PARSE(&t_cmd, "--version") == 0, "--version: exit 0");
}

int main(void)
{
	uint64_t v = 0;
	double d = 0;
	char buf[32];

	CHECK(opt_parse_size("65536", &v) == 0 && v == 65536, "plain");
	CHECK(opt_parse_size("64Ki", &v) == 0 && v == 65536, "Ki");
	CHECK(opt_parse_size("1Mi", &v) == 0 && v == 1048576, "Mi");
	CHECK(opt_parse_size("2Gi", &v) == 0 && v == 2147483648ULL, "Gi");
	CHECK(opt_parse_size("3k", &v) == 0 && v == 3000, "k");
	CHECK(opt_parse_size("4M", &v) == 0 && v == 4000000, "M");
	CHECK(opt_parse_size("5G", &v) == 0 && v == 5000000000ULL, "G");
	CHECK(opt_parse_size("0", &v) == 0 && v == 0, "zero");
	CHECK(opt_parse_size("64K", &v) == -EINVAL, "K alone is not a suffix");
	CHECK(opt_parse_size("64Kib", &v) == -EINVAL, "trailing garbage");
	CHECK(opt_parse_size("64 Ki", &v) == -EINVAL, "space");
	CHECK(opt_parse_size("-1", &v) == -EINVAL, "negative");
	CHECK(opt_parse_size("+1", &v) == -EINVAL, "plus sign");
	CHECK(opt_parse_size("", &v) == -EINVAL, "empty");
	CHECK(opt_parse_size("0x10", &v) == -EINVAL, "hex");
	CHECK(opt_parse_size("18446744073709551615", &v) == 0 &&
	      v == UINT64_MAX, "max");
	CHECK(opt_parse_size("18446744073709551616", &v) == -ERANGE,
	      "overflow in digits");
	CHECK(opt_parse_size("17179869184Gi", &v) == -ERANGE,
	      "overflow in suffix");
	CHECK(opt_parse_uint("65535", 65535, &v) == 0 && v == 65535, "uint max");
	CHECK(opt_parse_uint("65536", 65535, &v) == -ERANGE, "uint over max");
	CHECK(opt_parse_uint("12x", 65535, &v) == -EINVAL, "uint garbage");
	CHECK(opt_parse_seconds("2", &d) == 0 && d == 2, "seconds");
	CHECK(opt_parse_seconds("0.5", &d) == 0 && d == 0.5, "fraction");
	CHECK(opt_parse_seconds("1.", &d) == -EINVAL, "dangling dot");
	CHECK(opt_parse_seconds("-1", &d) == -EINVAL, "negative seconds");
	CHECK(opt_parse_rate("200M", false, &v) == 0 && v == 200000000,
	      "rate as a size per second");
	CHECK(opt_parse_rate("1Gi", false, &v) == 0 && v == 1ULL << 30,
	      "rate in Gi");
	CHECK(opt_parse_rate("1gbit", false, &v) == 0 && v == 125000000,
	      "rate in bits");
	CHECK(opt_parse_rate("1.5gbps", true, &v) == 0 && v == 1500000000,
	      "tc rate in bytes, fraction");
	CHECK(opt_parse_rate("200M", true, &v) == -EINVAL,
	      "tc_only: a size is no tc rate");
	CHECK(opt_parse_rate("0", false, &v) == -EINVAL, "rate 0");
	CHECK(opt_parse_rate("0gbit", false, &v) == -EINVAL, "rate 0gbit");
	CHECK(opt_parse_rate("7bit", false, &v) == -EINVAL, "below 1 B/s");
	CHECK(opt_parse_rate("10furlongs", false, &v) == -EINVAL, "unit");
	CHECK(opt_parse_rate("99999999999tbit", false, &v) == -EINVAL,
	      "absurd rate");
	CHECK(!strcmp(opt_fmt_size(65536, buf, sizeof(buf)), "64Ki"), "fmt Ki");
	CHECK(!strcmp(opt_fmt_size(1000, buf, sizeof(buf)), "1000"), "fmt plain");
	t_every_type();
	t_ranges();
	t_every_error();
	t_roles();
	t_help_text();
	return CHECK_DONE();
}
