// SPDX-License-Identifier: MIT
/*
 * Command line of `dnd bench`: its option table, the checks between the
 * options, and the call into bench/bench.c, which runs every method pair
 * as separate sender and receiver processes beside the reference rows.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/bench_ns.h"
#include "bench/bench_proc.h"
#include "cli/cmd_bench.h"
#include "cli/opt_parse.h"
#include "cli/opts.h"
#include "core/log.h"
#include "xfer/method.h"

struct bench_cli {
	struct bench_opts o;
	unsigned int src, sink;		/* 1 << enum bench_src, bench_sink */
};

#define B struct bench_cli
#define GIB (1ULL << 30)
#define STR_(x) #x
#define STR(x) STR_(x)

static const struct opt_word bench_srcs[] = {
	{ "zero", 1u << BENCH_SRC_ZERO, NULL },
	{ "file", 1u << BENCH_SRC_FILE, NULL },
	{ NULL, 0, NULL },
};

static const struct opt_word bench_sinks[] = {
	{ "null", 1u << BENCH_SINK_NULL, NULL },
	{ "file", 1u << BENCH_SINK_FILE, NULL },
	{ NULL, 0, NULL },
};

static const struct opt_word bench_caches[] = {
	{ "warm", 0, NULL },
	{ "cold", 1, NULL },
	{ NULL, 0, NULL },
};

static const struct opt_def bench_table[] = {
	{ .name = "full", .type = DND_OPT_FLAG, .group = "What runs",
	  .help = "all four of {zero,file} -> {null,file} (by default zero -> "
	  "null and file -> file, plus a 'best path' set; about 60-90 s)",
	  OPT_AT(B, o.full) },
	{ .name = "quick", .type = DND_OPT_FLAG, .group = "What runs",
	  .help = "the default's cells at CI size, 1 run each (15 s at most)",
	  OPT_AT(B, o.quick) },
	{ .name = "src", .type = DND_OPT_WORDS, .noun = "source",
	  .words = bench_srcs, .group = "What runs",
	  .help = "sources, a comma list of zero and file", OPT_AT(B, src) },
	{ .name = "sink", .type = DND_OPT_WORDS, .noun = "sink",
	  .words = bench_sinks, .group = "What runs",
	  .help = "sinks, a comma list of null and file", OPT_AT(B, sink) },
	{ .name = "send", .type = DND_OPT_LIST, .elem = DND_OPT_METHOD,
	  .need = DND_ROLE_SEND, .group = "What runs", .def = "all",
	  .help = "send methods, a comma list ('dnd send --help' lists them)",
	  OPT_ARRAY(B, o.send_m, o.nsend) },
	{ .name = "recv", .type = DND_OPT_LIST, .elem = DND_OPT_METHOD,
	  .need = DND_ROLE_RECV, .group = "What runs", .def = "all",
	  .help = "receive methods, a comma list",
	  OPT_ARRAY(B, o.recv_m, o.nrecv) },
	{ .name = "no-best-path", .type = DND_OPT_FLAG, .flags = DND_OPT_F_NEG,
	  .group = "What runs", .help = "skip the tuned 'best path' tables",
	  OPT_AT(B, o.best_path) },
	{ .name = "repeat", .letter = 'r', .type = DND_OPT_COUNT, .min = 1,
	  .max = BENCH_MAX_REPEAT, .group = "What runs", .def = "3; --quick 1",
	  .hint = "give a number of runs from 1 to " STR(BENCH_MAX_REPEAT),
	  .help = "runs per cell", OPT_AT(B, o.repeat) },
	{ .name = "size", .letter = 's', .type = DND_OPT_SIZE, .min = 4096,
	  .max = UINT64_MAX, .group = "What runs",
	  .hint = "give a size of at least 4Ki, e.g. 512Mi",
	  .def = "1Gi into /dev/null, 256Mi into a file; --quick 32Mi and 8Mi",
	  .help = "bytes per run", OPT_AT(B, o.size) },
	{ .name = "buffer", .letter = 'b', .type = DND_OPT_LIST,
	  .elem = DND_OPT_SIZE, .min = 1, .max = GIB, .group = "Tunables, "
	  "passed to both sides", .hint = "give sizes from 1 to 1Gi, e.g. "
	  "16Ki,64Ki,1Mi", .help = "buffer sizes to sweep, a comma list",
	  OPT_ARRAY(B, o.bufs, o.nbufs) },
	{ .name = "pipe-size", .type = DND_OPT_LIST, .elem = DND_OPT_SIZE,
	  DND_OPT_PIPE_RANGE, .group = "Tunables, passed to both sides",
	  .def = "0, the kernel's", .help = "pipe sizes to sweep for the pipe "
	  "methods, e.g. 64Ki,1Mi", OPT_ARRAY(B, o.pipes, o.npipes) },
	{ .name = "streams", .type = DND_OPT_LIST, .elem = DND_OPT_COUNT,
	  .min = 1, .max = 64, .group = "Tunables, passed to both sides",
	  .hint = "give stream counts from 1 to 64, e.g. 1,2,4",
	  .help = "TCP streams per transfer to sweep (-P of the senders), "
	  "a comma list", OPT_ARRAY(B, o.streams, o.nstreams) },
	{ .name = "window", .letter = 'w', .type = DND_OPT_SIZE, .max = GIB,
	  .group = "Tunables, passed to both sides", .def = "0, autotuning",
	  .hint = "give a size up to 1Gi, or 0 for autotuning",
	  .help = "SO_SNDBUF/SO_RCVBUF; 0 leaves the kernel's autotuning on",
	  OPT_AT(B, o.window) },
	{ .name = "cache", .type = DND_OPT_WORD, .words = bench_caches,
	  .metavar = "warm|cold", .group = "Tunables, passed to both sides",
	  .help = "cold drops the page cache before each file-source run",
	  OPT_AT(B, o.cold) },
	{ .name = "pin", .type = DND_OPT_FLAG,
	  .group = "Tunables, passed to both sides",
	  .help = "sender on CPU 0, receiver on CPU 1 (iperf3 too)",
	  OPT_AT(B, o.pin) },
	{ .name = "compare", .type = DND_OPT_FLAG, .group = "References",
	  .help = "also run iperf3 (default and -l 1M) on the same path",
	  OPT_AT(B, o.compare) },
	{ .name = "netns", .type = DND_OPT_FLAG, .group = "Path (default: "
	  "loopback, 127.0.0.1)", .help = "two network namespaces joined by a "
	  "veth pair (needs root)", OPT_AT(B, o.netns) },
	{ .name = "mtu", .type = DND_OPT_COUNT, .min = 68, .max = 65535,
	  .group = "Path (default: loopback, 127.0.0.1)",
	  .hint = "give 68 to 65535, e.g. 1500 or 9000",
	  .help = "veth MTU; 9000 for jumbo frames", OPT_AT(B, o.mtu) },
	{ .name = "rate", .type = DND_OPT_STRING, .metavar = "RATE",
	  .group = "Path (default: loopback, 127.0.0.1)",
	  .help = "tbf rate limit on the veth, e.g. 10gbit", OPT_AT(B, o.rate) },
	{ .name = "netem", .type = DND_OPT_STRING, .metavar = "ARGS",
	  .group = "Path (default: loopback, 127.0.0.1)",
	  .help = "netem delay and loss, e.g. \"delay 1ms loss 0.1%\" (needs "
	  "sch_netem in the kernel)", OPT_AT(B, o.netem) },
	{ .name = "remote", .type = DND_OPT_STRING, .metavar = "HOST",
	  .group = "Against a dnd serve on HOST", .help = "each cell's local "
	  "end runs here, the far end's method in the server, which sinks "
	  "into /dev/null or a scratch file beneath its DIR (removed after)",
	  OPT_AT(B, o.remote) },
	{ .name = "port", .letter = 'p', .type = DND_OPT_PORT,
	  .group = "Against a dnd serve on HOST", .def = "13931",
	  .help = "the server's TCP port", OPT_AT(B, o.rport) },
	{ .name = "key", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Against a dnd serve on HOST", .help = "the server's key "
	  "file (mode 0600)", OPT_AT(B, o.key) },
	{ .name = "reverse", .type = DND_OPT_FLAG,
	  .group = "Against a dnd serve on HOST", .help = "the server sends "
	  "(pulls from /dev/zero or a random scratch file it makes) and this "
	  "host receives", OPT_AT(B, o.reverse) },
	{ .name = "json", .type = DND_OPT_STRING, .flags = DND_OPT_F_OPTARG,
	  .implied = "-", .metavar = "FILE", .group = "Output",
	  .help = "JSON Lines, one object per cell and reference (without "
	  "FILE on stdout; the table then goes to stderr)",
	  OPT_AT(B, o.json_path) },
	{ .name = "csv", .type = DND_OPT_STRING, .flags = DND_OPT_F_OPTARG,
	  .implied = "-", .metavar = "FILE", .group = "Output",
	  .help = "CSV, one row per cell and reference", OPT_AT(B, o.csv_path) },
	{ .name = "plot", .type = DND_OPT_STRING, .metavar = "FILE",
	  .group = "Output", .help = "FILE.png or FILE.svg drawn with gnuplot",
	  OPT_AT(B, o.plot_path) },
	{ .name = "dir", .type = DND_OPT_STRING, .metavar = "DIR",
	  .group = "Output", .help = "where the scratch directory goes",
	  OPT_AT(B, o.dir) },
	{ .name = NULL },
};

static const struct opt_part bench_parts[] = {
	{ bench_table, 0 },
	{ NULL, 0 },
};

static void bench_defaults(struct bench_cli *c)
{
	const struct dnd_method *const *m;
	struct bench_opts *o = &c->o;

	memset(c, 0, sizeof(*c));
	o->best_path = true;
	o->mtu = 1500;
	o->dir = "/var/tmp";
	o->rport = 13931;
	o->bufs[o->nbufs++] = 64 * 1024;
	o->pipes[o->npipes++] = 0;
	o->streams[o->nstreams++] = 1;
	c->src = 1u << BENCH_SRC_ZERO | 1u << BENCH_SRC_FILE;
	c->sink = 1u << BENCH_SINK_NULL | 1u << BENCH_SINK_FILE;
	for (m = method_all(); *m; m++) {
		if ((*m)->send && o->nsend < BENCH_MAX_M)
			o->send_m[o->nsend++] = *m;
		if ((*m)->recv && o->nrecv < BENCH_MAX_M)
			o->recv_m[o->nrecv++] = *m;
	}
}

/* Derived settings: repeats, which pairs and which source x sink tables. */
static void bench_settle(const struct opt_state *st, struct bench_cli *c)
{
	struct bench_opts *o = &c->o;
	bool picked = opt_given(st, "src") || opt_given(st, "sink");
	int s, k;

	if (!o->repeat)
		o->repeat = o->quick ? 1 : 3;
	o->all_pairs = o->full || opt_given(st, "send") ||
		       opt_given(st, "recv");
	for (s = 0; s < BENCH_SRC_COUNT; s++)
		o->src[s] = c->src & (1u << s);
	for (k = 0; k < BENCH_SINK_COUNT; k++)
		o->sink[k] = c->sink & (1u << k);
	for (s = 0; s < BENCH_SRC_COUNT; s++)
		for (k = 0; k < BENCH_SINK_COUNT; k++)
			o->combo[s][k] = o->src[s] && o->sink[k] &&
					 (o->full || picked || s == k);
}

/* --remote's companions and what it excludes; adds to st->bad. */
static void bench_check_remote(struct opt_state *st, struct bench_opts *o)
{
	if (!o->remote && (opt_given(st, "port") || o->key || o->reverse)) {
		log_err("-p, --key and --reverse are for a bench against a dnd "
			"serve: add --remote HOST");
		st->bad++;
	}
	if (o->remote && (o->netns || o->pin || o->compare)) {
		log_err("--remote measures the path to HOST; %s needs both ends "
			"here: drop it", o->netns ? "--netns" : o->pin ?
			"--pin" : "--compare (iperf3 starts its own server)");
		st->bad++;
	}
}

/* Options that need others, or a tool; adds to st->bad. */
static void bench_check(struct opt_state *st, void *obj)
{
	struct bench_opts *o = &((struct bench_cli *)obj)->o;
	const char *dot = o->plot_path ? strrchr(o->plot_path, '.') : NULL;
	char exe[256];

	if (st->nargs)
		log_err("bench takes no FILE ('%s'); it makes its own",
			st->args[0]);
	st->bad += st->nargs > 0;
	if (!o->netns && (opt_given(st, "mtu") || o->rate || o->netem)) {
		log_err("--mtu, --rate and --netem shape the veth of --netns; "
			"add --netns");
		st->bad++;
	}
	bench_check_remote(st, o);
	if (o->rate && opt_parse_rate(o->rate, true, &o->rate_bps)) {
		log_err("--rate '%s': give a tc rate such as 10gbit, 500mbit "
			"or 1gbps", o->rate);
		st->bad++;
	}
	if (o->json_path && o->csv_path && !strcmp(o->json_path, "-") &&
	    !strcmp(o->csv_path, "-")) {
		log_err("--json and --csv cannot both take stdout; give one a "
			"file: --csv=FILE");
		st->bad++;
	}
	if (o->plot_path && (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg")) ||
			     strpbrk(o->plot_path, "'\n"))) {
		log_err("--plot '%s': name a .png or .svg file (without quotes)",
			o->plot_path);
		st->bad++;
	} else if (o->plot_path && !bench_find_tool("gnuplot", exe, sizeof(exe))) {
		log_err("--plot needs gnuplot; apt-get install gnuplot-nox (or "
			"make deps)");
		st->bad++;
	}
	bench_settle(st, obj);
}

static const struct opt_cmd bench_cmd = {
	.name = "bench",
	.usage = "dnd bench [options]",
	.about = "Runs send x recv method pairs over TCP, each run as a "
		 "separate 'dnd send' and 'dnd recv' process, and prints a "
		 "results table for this machine: throughput (median, spread), "
		 "CPU per side, system calls per MB, with memcpy, pipe-only and "
		 "(--compare) iperf3 reference rows from the same run, and for "
		 "file -> file a local buffered copy and the device's O_DIRECT "
		 "write rate. Every byte into a file is verified (xxh3). "
		 "Progress goes to stderr.",
	.notes = "Sizes take k M G (10^3..) or Ki Mi Gi (2^10..). MB/s is "
		 "10^6 bytes/s.\n'dnd bench relay' measures the relay instead.\n"
		 "Exit: 0 every cell ran, 1 a cell or an output failed, 2 usage "
		 "or setup.",
	.parts = bench_parts,
	.check = bench_check,
};

int cmd_bench(int argc, char **argv)
{
	struct bench_cli c;
	struct opt_state st;
	int r;

	bench_defaults(&c);
	r = opt_parse(&bench_cmd, &c, argc, argv, &st);
	if (r >= 0)
		return r;
	return bench_main(&c.o);
}
