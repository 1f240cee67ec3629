// SPDX-License-Identifier: MIT
/*
 * `dnd bench` once its options are settled: the path (loopback or two
 * network namespaces), the plan, every cell's runs with the reference rounds
 * spread between them, the outputs, and the cleanup.
 */
#include <sys/utsname.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_ns.h"
#include "bench/bench_out.h"
#include "bench/bench_plan.h"
#include "bench/bench_ref.h"
#include "bench/bench_run.h"
#include "cli/opts.h"
#include "core/io.h"
#include "core/log.h"
#include "core/stats.h"
#include "xfer/method.h"

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

	if (b->o.remote) {
		snprintf(b->facts.path, sizeof(b->facts.path), "dnd serve at "
			 "%s port %u, %s (the far end in the server)",
			 b->host, b->o.rport, b->o.reverse ? "pulls: it sends" :
			 "pushes: it receives");
		return;
	}
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
		if (r && b->o.remote && strstr(why, "--peer-method")) {
			/* The server cannot run that end: n/a, its reason. */
			fprintf(stderr, "n/a: %s\n", why);
			snprintf(c->why, sizeof(c->why), "%.300s", why);
			c->state = BENCH_NA;
			*done += b->o.repeat - i - 1;
			return 0;
		}
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

/* Writes one output to path ("-" is stdout); 0, or 1 with why printed. */
static int bench_output(struct bench *b, const char *path,
			void (*write)(FILE *f, const struct bench *b))
{
	FILE *f = strcmp(path, "-") ? fopen(path, "we") : stdout;
	int bad;

	if (!f) {
		log_err("cannot write %s: %s", path, strerror(errno));
		return 1;
	}
	write(f, b);
	bad = f == stdout ? fflush(f) != 0 : fclose(f) != 0;
	if (bad && f != stdout)
		log_err("cannot write %s: %s", path, strerror(errno));
	return bad;
}

/* Table, JSON Lines, CSV, plot; returns how many outputs failed. */
static int bench_outputs(struct bench *b)
{
	const struct bench_opts *o = &b->o;
	bool taken = (o->json_path && !strcmp(o->json_path, "-")) ||
		     (o->csv_path && !strcmp(o->csv_path, "-"));
	int bad = 0;

	bench_number_notes(b);
	bench_mark_best(b);
	bench_print(taken ? stderr : stdout, b);
	if (o->json_path)
		bad += bench_output(b, o->json_path, bench_write_json);
	if (o->csv_path)
		bad += bench_output(b, o->csv_path, bench_write_csv);
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
	if (b->o.remote)
		b->host = b->o.remote;
	b->port_next = 20000 + (unsigned int)(getpid() ^ time(NULL)) % 12000;
	if (b->o.netns) {
		r = bench_ns_setup(b);
		if (r)
			return r;
	}
	bench_path_fact(b);
	if (bench_plan(b)) {
		log_err("out of memory planning %u cells", b->ncells);
		return 1;
	}
	bench_refs_plan(b);	/* after the tables: file ones add two */
	for (i = 0; i < b->ncells; i++)
		na += b->cells[i].state != BENCH_TODO;
	fprintf(stderr, "dnd bench: %s; %u tables, %u cells (%u cannot run "
		"or repeat another), %u runs\n", b->facts.path, b->ngroups,
		b->ncells, na, bench_runs_planned(b));
	return bench_prepare(b);
}

int bench_main(const struct bench_opts *o)
{
	double t0 = stats_now();
	struct bench *b;
	int r, failed = 0;

	b = calloc(1, sizeof(*b));
	if (!b) {
		log_err("out of memory");
		return 1;
	}
	b->o = *o;
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
	free(b);
	return r;
}
