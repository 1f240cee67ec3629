// SPDX-License-Identifier: MIT
/*
 * `dnd bench`: every send x recv method pair, from /dev/zero or a file into
 * /dev/null or a file, each run as a separate sender and receiver process,
 * N times, with reference rows from the same run. Options and the plan
 * live here; running, measuring and printing are in bench_*.c.
 */
#include <sys/utsname.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_ns.h"
#include "bench/bench_out.h"
#include "bench/bench_plan.h"
#include "bench/bench_proc.h"
#include "bench/bench_ref.h"
#include "bench/bench_run.h"
#include "cli/cmd_bench.h"
#include "core/io.h"
#include "core/log.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "core/stats.h"

#define GiB (1ULL << 30)

enum {
	OPT_PIPE_SIZE = 256,
	OPT_FULL,
	OPT_QUICK,
	OPT_COMPARE,
	OPT_CACHE,
	OPT_NETNS,
	OPT_MTU,
	OPT_RATE,
	OPT_NETEM,
	OPT_JSON,
	OPT_CSV,
	OPT_PLOT,
	OPT_SEND,
	OPT_RECV,
	OPT_SRC,
	OPT_SINK,
	OPT_PIN,
	OPT_NO_BEST,
	OPT_DIR,
};

static const struct option bench_longopts[] = {
	{ "buffer", required_argument, NULL, 'b' },
	{ "help", no_argument, NULL, 'h' },
	{ "repeat", required_argument, NULL, 'r' },
	{ "size", required_argument, NULL, 's' },
	{ "window", required_argument, NULL, 'w' },
	{ "pipe-size", required_argument, NULL, OPT_PIPE_SIZE },
	{ "full", no_argument, NULL, OPT_FULL },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "compare", no_argument, NULL, OPT_COMPARE },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "netns", no_argument, NULL, OPT_NETNS },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "netem", required_argument, NULL, OPT_NETEM },
	{ "json", optional_argument, NULL, OPT_JSON },
	{ "csv", optional_argument, NULL, OPT_CSV },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "send", required_argument, NULL, OPT_SEND },
	{ "recv", required_argument, NULL, OPT_RECV },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "sink", required_argument, NULL, OPT_SINK },
	{ "pin", no_argument, NULL, OPT_PIN },
	{ "no-best-path", no_argument, NULL, OPT_NO_BEST },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ NULL, 0, NULL, 0 },
};

static void bench_usage(FILE *f)
{
	fprintf(f,
"usage: dnd bench [options]\n\n"
"Runs send x recv method pairs over TCP, each run as a separate 'dnd send'\n"
"and 'dnd recv' process, and prints seed 000's results table for this\n"
"machine: throughput (median, spread), CPU per side, system calls per MB,\n"
"with memcpy, pipe-only and (--compare) iperf3 reference rows from the same\n"
"run. Every byte into a file is verified (xxh3). Progress goes to stderr.\n\n"
"What runs:\n"
"  (default)             zero -> null and file -> file, every method pair, "
"plus a\n"
"                        'best path' set (-b 1Mi, biggest pipe); about 60-90 s\n"
"      --full            all four of {zero,file} -> {null,file}\n"
"      --quick           the default's cells at CI size, 1 run each (<= 15 s)\n"
"      --src LIST        sources: zero,file     --sink LIST  sinks: null,file\n"
"      --send LIST       send methods (default all)   --recv LIST  recv methods\n"
"      --no-best-path    skip the tuned 'best path' tables\n"
"  -r, --repeat N        runs per cell (default 3; --quick 1)\n"
"  -s, --size SIZE       bytes per run (default 1Gi into /dev/null, 256Mi into "
"a\n"
"                        file; --quick 32Mi and 8Mi)\n"
"Tunables, passed to both sides:\n"
"  -b, --buffer LIST     buffer sizes to sweep (default 64Ki), e.g. "
"16Ki,64Ki,1Mi\n"
"      --pipe-size LIST  pipe sizes to sweep for pipe methods (default: the\n"
"                        kernel's), e.g. 64Ki,1Mi\n"
"  -w, --window SIZE     SO_SNDBUF/SO_RCVBUF (default 0 = kernel autotuning)\n"
"      --cache warm|cold cold drops the page cache before each file-source "
"run\n"
"      --pin             sender on CPU 0, receiver on CPU 1 (iperf3 too)\n"
"References:\n"
"      --compare         also run iperf3 (default and -l 1M) on the same path\n"
"Path (default loopback 127.0.0.1):\n"
"      --netns           two network namespaces joined by a veth pair (root)\n"
"      --mtu N           veth MTU (default 1500; 9000 for jumbo frames)\n"
"      --rate RATE       tbf rate limit on the veth, e.g. 10gbit\n"
"      --netem \"ARGS\"    netem delay/loss, e.g. \"delay 1ms loss 0.1%%\" (needs\n"
"                        sch_netem in the kernel)\n"
"Output:\n"
"      --json[=FILE]     JSON Lines, one object per cell and reference "
"(stdout\n"
"                        without FILE; the table then goes to stderr)\n"
"      --csv[=FILE]      CSV, one row per cell and reference\n"
"      --plot FILE       FILE.png or FILE.svg drawn with gnuplot\n"
"      --dir DIR         scratch directory parent (default /var/tmp)\n"
"  -h, --help            this text\n\n"
"Sizes take k M G (10^3..) or Ki Mi Gi (2^10..). MB/s is 10^6 bytes/s.\n"
"Exit: 0 every cell ran, 1 a cell or an output failed, 2 usage or setup.\n");
}

/* Parses "a,b,c" sizes into out[]; 0 or -1 (printed). */
static int bench_sizes(const char *opt, const char *arg, uint64_t min,
		       uint64_t max, uint64_t *out, unsigned int *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int bad = 0;

	*n = 0;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (*n == BENCH_MAX_LIST) {
			log_err("%s: at most %d values", opt, BENCH_MAX_LIST);
			bad = 1;
		} else if (opt_parse_size(tok, &v) || v < min || v > max) {
			log_err("%s '%s': give sizes from %llu to %llu, e.g. "
				"64Ki,1Mi", opt, tok, (unsigned long long)min,
				(unsigned long long)max);
			bad = 1;
		} else {
			out[(*n)++] = v;
		}
	}
	if (!*n && !bad) {
		log_err("%s needs at least one size", opt);
		bad = 1;
	}
	free(copy);
	return bad ? -1 : 0;
}

/* Parses a method list for one direction; 0 or -1 (printed). */
static int bench_methods(const char *arg, bool send,
			 const struct dnd_method **out, unsigned int *n)
{
	char *copy = strdup(arg), *tok, *save = NULL, names[160];
	int bad = 0;

	*n = 0;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !bad;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct dnd_method *m = method_find(tok);

		if (!m || !(send ? m->send : m->recv)) {
			log_err("--%s: '%s' is not a %s method; choose from %s",
				send ? "send" : "recv", tok,
				send ? "send" : "receive",
				method_names(send, names, sizeof(names)));
			bad = 1;
		} else if (*n < BENCH_MAX_M) {
			out[(*n)++] = m;
		}
	}
	free(copy);
	return bad || !*n ? -1 : 0;
}

/* Parses "zero,file" or "null,file" into flags; 0 or -1 (printed). */
static int bench_ends(const char *opt, const char *arg, const char *a,
		      const char *b, bool *flags)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int bad = !copy;

	flags[0] = flags[1] = false;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, a) || !strcmp(tok, b)) {
			flags[!strcmp(tok, b)] = true;
			continue;
		}
		log_err("%s: '%s' is not one of %s, %s", opt, tok, a, b);
		bad = 1;
	}
	free(copy);
	return bad ? -1 : 0;
}

static void bench_defaults(struct bench_opts *o)
{
	const struct dnd_method *const *m;

	memset(o, 0, sizeof(*o));
	o->repeat = 0;			/* 3, or 1 with --quick */
	o->best_path = true;
	o->mtu = 1500;
	o->dir = "/var/tmp";
	for (m = method_all(); *m; m++) {
		if ((*m)->send && o->nsend < BENCH_MAX_M)
			o->send_m[o->nsend++] = *m;
		if ((*m)->recv && o->nrecv < BENCH_MAX_M)
			o->recv_m[o->nrecv++] = *m;
	}
}

/* Handles one option; returns the count of errors it printed. */
static int bench_opt(struct bench_opts *o, int c, const char *arg,
		     bool *set_src, bool *set_sink, bool *set_mtu)
{
	uint64_t v[BENCH_MAX_LIST];
	unsigned int n, i;

	switch (c) {
	case 'b':
		return bench_sizes("-b", arg, 1, GiB, o->bufs, &o->nbufs) ? 1 : 0;
	case OPT_PIPE_SIZE:
		if (bench_sizes("--pipe-size", arg, 4096, GiB, v, &n))
			return 1;
		for (i = 0; i < n; i++)
			o->pipes[i] = (unsigned int)v[i];
		o->npipes = n;
		return 0;
	case 'r':
		if (!opt_parse_uint(arg, BENCH_MAX_REPEAT, &v[0]) && v[0]) {
			o->repeat = (unsigned int)v[0];
			return 0;
		}
		log_err("-r '%s': give a number of runs from 1 to %d", arg,
			BENCH_MAX_REPEAT);
		return 1;
	case 's':
		if (!opt_parse_size(arg, &o->size) && o->size >= 4096)
			return 0;
		log_err("-s '%s': give a size of at least 4Ki, e.g. 512Mi", arg);
		return 1;
	case 'w':
		if (!opt_parse_size(arg, &o->window) && o->window <= GiB)
			return 0;
		log_err("-w '%s': give a size up to 1Gi, or 0 for autotuning",
			arg);
		return 1;
	case OPT_SEND:
		o->all_pairs = true;
		return bench_methods(arg, true, o->send_m, &o->nsend) ? 1 : 0;
	case OPT_RECV:
		o->all_pairs = true;
		return bench_methods(arg, false, o->recv_m, &o->nrecv) ? 1 : 0;
	case OPT_SRC:
		*set_src = true;
		return bench_ends("--src", arg, "zero", "file", o->src) ? 1 : 0;
	case OPT_SINK:
		*set_sink = true;
		return bench_ends("--sink", arg, "null", "file", o->sink) ? 1 : 0;
	case OPT_MTU:
		*set_mtu = true;
		if (!opt_parse_uint(arg, 65535, &v[0]) && v[0] >= 68) {
			o->mtu = (unsigned int)v[0];
			return 0;
		}
		log_err("--mtu '%s': give 68 to 65535, e.g. 1500 or 9000", arg);
		return 1;
	}
	return -1;
}

/* The options that only switch something on or name a string. */
static int bench_opt2(struct bench_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_FULL:
		o->full = true;
		return 0;
	case OPT_QUICK:
		o->quick = true;
		return 0;
	case OPT_COMPARE:
		o->compare = true;
		return 0;
	case OPT_NETNS:
		o->netns = true;
		return 0;
	case OPT_PIN:
		o->pin = true;
		return 0;
	case OPT_NO_BEST:
		o->best_path = false;
		return 0;
	case OPT_CACHE:
		if (!strcmp(arg, "warm") || !strcmp(arg, "cold")) {
			o->cold = !strcmp(arg, "cold");
			return 0;
		}
		log_err("--cache '%s': use warm or cold", arg);
		return 1;
	case OPT_RATE:
		o->rate = arg;
		if (!bench_parse_rate(arg, &o->rate_bps))
			return 0;
		log_err("--rate '%s': give a tc rate such as 10gbit, 500mbit "
			"or 1gbps", arg);
		return 1;
	case OPT_NETEM:
		o->netem = arg;
		return 0;
	case OPT_JSON:
		o->json_path = arg ? arg : "-";
		return 0;
	case OPT_CSV:
		o->csv_path = arg ? arg : "-";
		return 0;
	case OPT_PLOT:
		o->plot_path = arg;
		return 0;
	case OPT_DIR:
		o->dir = arg;
		return 0;
	}
	return -1;
}

/* Conflicts and derived defaults; returns the count of errors printed. */
static int bench_settle(struct bench_opts *o, bool set_src, bool set_sink,
			bool set_mtu)
{
	const char *dot = o->plot_path ? strrchr(o->plot_path, '.') : NULL;
	char exe[256];
	int bad = 0, s, k;

	if (!o->netns && (set_mtu || o->rate || o->netem)) {
		log_err("--mtu, --rate and --netem shape the veth of --netns; "
			"add --netns");
		bad++;
	}
	if (o->json_path && o->csv_path && !strcmp(o->json_path, "-") &&
	    !strcmp(o->csv_path, "-")) {
		log_err("--json and --csv cannot both take stdout; give one a "
			"file: --csv=FILE");
		bad++;
	}
	if (o->plot_path && (!dot || (strcmp(dot, ".png") && strcmp(dot, ".svg")) ||
			     strpbrk(o->plot_path, "'\n"))) {
		log_err("--plot '%s': name a .png or .svg file (without quotes)",
			o->plot_path);
		bad++;
	} else if (o->plot_path && !bench_find_tool("gnuplot", exe, sizeof(exe))) {
		log_err("--plot needs gnuplot; apt-get install gnuplot-nox (or "
			"make deps)");
		bad++;
	}
	if (!o->repeat)
		o->repeat = o->quick ? 1 : 3;
	o->all_pairs = o->all_pairs || o->full;
	if (!o->nbufs)
		o->bufs[o->nbufs++] = 64 * 1024;
	if (!o->npipes)
		o->pipes[o->npipes++] = 0;
	if (!set_src)
		o->src[0] = o->src[1] = true;
	if (!set_sink)
		o->sink[0] = o->sink[1] = true;
	for (s = 0; s < BENCH_SRC_COUNT; s++)
		for (k = 0; k < BENCH_SINK_COUNT; k++)
			o->combo[s][k] = o->src[s] && o->sink[k] &&
					 (o->full || set_src || set_sink ||
					  s == k);
	return bad;
}

/* Returns -1 to run, or an exit code (help 0, usage 2). */
static int bench_parse(int argc, char **argv, struct bench_opts *o)
{
	bool set_src = false, set_sink = false, set_mtu = false;
	int c, r, bad = 0;

	bench_defaults(o);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":b:hr:s:w:", bench_longopts,
				NULL)) != -1) {
		if (c == 'h') {
			bench_usage(stdout);
			return 0;
		}
		if (c == ':') {
			log_err("%s needs a value", argv[optind - 1]);
			bad++;
			continue;
		}
		r = bench_opt(o, c, optarg, &set_src, &set_sink, &set_mtu);
		if (r < 0)
			r = bench_opt2(o, c, optarg);
		if (r < 0) {
			if (optopt)
				log_err("unknown option '-%c'", optopt);
			else
				log_err("unknown option '%s'", argv[optind - 1]);
			r = 1;
		}
		bad += r;
	}
	if (optind < argc) {
		log_err("bench takes no FILE ('%s'); it makes its own", argv[optind]);
		bad++;
	}
	bad += bench_settle(o, set_src, set_sink, set_mtu);
	if (bad) {
		log_err("see 'dnd bench --help'");
		return 2;
	}
	return -1;
}

static void bench_facts(struct bench *b)
{
	struct bench_facts *f = &b->facts;
	struct utsname u;
	char line[256];
	FILE *ci;

	snprintf(f->kernel, sizeof(f->kernel), "%s",
		 uname(&u) == 0 ? u.release : "?");
	f->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(f->cpu_model, sizeof(f->cpu_model), "unknown CPU");
	ci = fopen("/proc/cpuinfo", "re");
	while (ci && fgets(line, sizeof(line), ci)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(f->cpu_model, sizeof(f->cpu_model), "%s", colon);
		break;
	}
	if (ci)
		fclose(ci);
}

static void bench_path_fact(struct bench *b)
{
	char r[64] = "";

	if (!b->o.netns) {
		snprintf(b->facts.path, sizeof(b->facts.path), "loopback %s",
			 b->host);
		return;
	}
	if (b->o.rate)
		snprintf(r, sizeof(r), ", tbf %s", b->o.rate);
	snprintf(b->facts.path, sizeof(b->facts.path), "veth between two "
		 "network namespaces %s -> %s, MTU %u%s%s%s", "10.77.0.1",
		 b->host, b->o.mtu, r, b->o.netem ? ", netem " : "",
		 b->o.netem ? b->o.netem : "");
}

/* Removes our scratch directory and what is in it (only our files). */
static void bench_rm_dir(struct bench *b)
{
	DIR *d;
	struct dirent *e;
	char p[600];

	if (!b->dir[0])
		return;
	d = opendir(b->dir);
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", b->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	if (rmdir(b->dir) == -1)
		log_warn("could not remove the scratch directory %s: %s",
			 b->dir, strerror(errno));
	b->dir[0] = '\0';
}

static void bench_cleanup(struct bench *b)
{
	unsigned int i;

	bench_ns_teardown(b);
	bench_rm_dir(b);
	for (i = 0; i < b->ncells; i++)
		free(b->cells[i].runs);
	free(b->cells);
	free(b->groups);
}

static unsigned int bench_runs_planned(const struct bench *b)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->ncells; i++)
		n += b->cells[i].state == BENCH_TODO ? b->o.repeat : 0;
	return n;
}

/* Runs every repeat of one cell; 0 or -EINTR. */
static int bench_run_cell(struct bench *b, struct bench_cell *c,
			  unsigned int *done, unsigned int total)
{
	const struct bench_group *g = &b->groups[c->group];
	char why[400];
	unsigned int i;
	int r;

	for (i = 0; i < b->o.repeat; i++) {
		struct bench_run *run = &c->runs[c->nruns];

		r = bench_cell_run(b, c, run, why, sizeof(why));
		if (r == -EINTR)
			return r;
		++*done;
		fprintf(stderr, "dnd bench: [%u/%u] %s%s%s->%s %s -> %s run "
			"%u/%u: ", *done, total, g->label, g->label[0] ? " " : "",
			bench_src_name(g->src), bench_sink_name(g->sink),
			c->snd->name, c->rcv->name, i + 1, b->o.repeat);
		if (r) {
			fprintf(stderr, "FAILED: %s\n", why);
			snprintf(c->why, sizeof(c->why), "%s -> %s, run %u: %.250s",
				 c->snd->name, c->rcv->name, i + 1, why);
			c->state = BENCH_FAILED;
			*done += b->o.repeat - i - 1;
			return 0;
		}
		fprintf(stderr, "%.0f MB/s, %s\n", run->rcv.mbps,
			run->rcv.verdict);
		c->nruns++;
	}
	c->state = BENCH_OK;
	bench_summarize(c);
	return 0;
}

/*
 * Runs every cell, with the reference rounds spread evenly between them:
 * round k comes once k/N of the runs are done, so on a shared machine the
 * references and the cells see the same load. Returns the count of failed
 * cells, or -EINTR.
 */
static int bench_run_all(struct bench *b)
{
	unsigned int i = 0, done = 0, total = bench_runs_planned(b), round = 0;
	uint64_t net = bench_size_for(&b->o, BENCH_SINK_NULL);
	int failed = 0;

	for (;;) {
		while (round < b->o.repeat &&
		       (uint64_t)done * b->o.repeat >= (uint64_t)round * total) {
			if (bench_refs_round(b, net))
				return -EINTR;
			round++;
		}
		while (i < b->ncells && b->cells[i].state != BENCH_TODO)
			i++;
		if (i == b->ncells)
			break;
		if (bench_run_cell(b, &b->cells[i], &done, total))
			return -EINTR;
		failed += b->cells[i].state == BENCH_FAILED;
	}
	while (round++ < b->o.repeat)
		if (bench_refs_round(b, net))
			return -EINTR;
	return failed;
}

/* Scratch directory and, when a table needs it, the random source file. */
static int bench_prepare(struct bench *b)
{
	char tmpl[256];

	snprintf(tmpl, sizeof(tmpl), "%s/dnd-bench.XXXXXX", b->o.dir);
	if (!mkdtemp(tmpl)) {
		log_err("cannot make a scratch directory in %s: %s; choose "
			"another with --dir", b->o.dir, strerror(errno));
		return 2;
	}
	snprintf(b->dir, sizeof(b->dir), "%s", tmpl);
	snprintf(b->src_path, sizeof(b->src_path), "%s/src", b->dir);
	if (b->src_size) {
		char s[24];

		fprintf(stderr, "dnd bench: writing a %s random source file in "
			"%s\n", opt_fmt_size(b->src_size, s, sizeof(s)), b->dir);
		if (bench_make_source(b))
			return io_stop_signal ? 130 : 1;
	}
	return 0;
}

/* Opens an output ("-" is stdout); NULL with the reason printed. */
static FILE *bench_open(const char *path)
{
	FILE *f;

	if (!strcmp(path, "-"))
		return stdout;
	f = fopen(path, "we");
	if (!f)
		log_err("cannot write %s: %s", path, strerror(errno));
	return f;
}

static int bench_close(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) ? 1 : 0;
	if (fclose(f)) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

/* Table, JSON Lines, CSV, plot; returns how many outputs failed. */
static int bench_outputs(struct bench *b)
{
	const struct bench_opts *o = &b->o;
	bool taken = (o->json_path && !strcmp(o->json_path, "-")) ||
		     (o->csv_path && !strcmp(o->csv_path, "-"));
	int bad = 0;
	FILE *f;

	bench_number_notes(b);
	bench_mark_best(b);
	bench_print(taken ? stderr : stdout, b);
	if (o->json_path) {
		f = bench_open(o->json_path);
		if (f) {
			bench_write_json(f, b);
			bad += bench_close(f, o->json_path);
		} else {
			bad++;
		}
	}
	if (o->csv_path) {
		f = bench_open(o->csv_path);
		if (f) {
			bench_write_csv(f, b);
			bad += bench_close(f, o->csv_path);
		} else {
			bad++;
		}
	}
	if (o->plot_path)
		bad += bench_plot(b, o->plot_path, b->dir);
	return bad;
}

/* Sets up the path and the plan; 0 or an exit code. */
static int bench_setup(struct bench *b)
{
	unsigned int i, na = 0;
	int r;

	bench_facts(b);
	b->host = b->bind = "127.0.0.1";
	b->port_next = 20000 + (unsigned int)(getpid() ^ time(NULL)) % 12000;
	if (b->o.netns) {
		r = bench_ns_setup(b);
		if (r)
			return r;
	}
	bench_path_fact(b);
	bench_refs_plan(b);
	if (bench_plan(b)) {
		log_err("out of memory planning %u cells", b->ncells);
		return 1;
	}
	for (i = 0; i < b->ncells; i++)
		na += b->cells[i].state != BENCH_TODO;
	fprintf(stderr, "dnd bench: %s; %u tables, %u cells (%u cannot run "
		"or repeat another), %u runs\n", b->facts.path, b->ngroups,
		b->ncells, na, bench_runs_planned(b));
	return bench_prepare(b);
}

int cmd_bench(int argc, char **argv)
{
	double t0 = stats_now();
	struct bench *b;
	int r, failed = 0;

	b = calloc(1, sizeof(*b));
	if (!b) {
		log_err("out of memory");
		return 1;
	}
	r = bench_parse(argc, argv, &b->o);
	if (r >= 0)
		goto out;
	io_install_signals();
	r = bench_setup(b);
	if (!r)
		failed = bench_run_all(b);
	bench_refs_finish(b);
	if (!r && !io_stop_signal) {
		r = bench_outputs(b) || failed ? 1 : 0;
		if (failed)
			log_err("%d cell%s failed; the notes under the tables say "
				"why", failed, failed == 1 ? "" : "s");
		fprintf(stderr, "dnd bench: done in %.0f s\n", stats_now() - t0);
	}
	if (io_stop_signal) {
		r = 128 + io_stop_signal;
		log_err("stopped by %s; removed the scratch files%s",
			strsignal(io_stop_signal), b->ns_send[0] ?
			" and the network namespaces" : "");
	}
	bench_cleanup(b);
out:
	free(b);
	return r;
}
