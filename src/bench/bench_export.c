// SPDX-License-Identifier: MIT
/*
 * Machine-readable bench output: JSON Lines (one object per cell and per
 * reference, each with json_begin_doc()'s fields and the machine), CSV with
 * a fixed set of columns, and a gnuplot chart drawn from a data file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_export.h"
#include "bench/bench_out.h"
#include "bench/bench_proc.h"
#include "bench/bench_ref.h"
#include "core/json.h"
#include "xfer/method.h"
#include "core/stats.h"

static const char *const state_names[] = {
	[BENCH_TODO] = "not run",
	[BENCH_OK] = "ok",
	[BENCH_FAILED] = "failed",
	[BENCH_NA] = "n/a",
	[BENCH_SAME] = "same",
	[BENCH_OFF] = "not in set",
};

/*
 * Starts a cell's or a reference's object: the fields every dnd object has
 * (type "bench_<kind>"), kind as before, and the machine and run settings.
 */
static void json_common(struct json *j, FILE *f, const struct bench *b,
			const char *kind)
{
	char type[32];

	snprintf(type, sizeof(type), "bench_%s", kind);
	json_begin_doc(j, f, type);
	json_str(j, "kind", kind);
	json_obj_begin(j, "machine");
	json_str(j, "kernel", b->facts.kernel);
	json_i64(j, "ncpu", b->facts.ncpu);
	json_str(j, "cpu_model", b->facts.cpu_model);
	json_obj_end(j);
	json_str(j, "path", b->facts.path);
	json_bool(j, "netns", b->ns_send[0] || b->o.netns);
	if (b->o.netns) {
		json_u64(j, "mtu", b->o.mtu);
		json_str(j, "rate", b->o.rate);
		json_str(j, "netem", b->o.netem);
	}
	json_u64(j, "repeat", b->o.repeat);
	json_u64(j, "window", b->o.window);
	json_str(j, "cache", b->o.cold && !b->cold_failed ? "cold" : "warm");
	json_str(j, "cache_note", b->cache_note[0] ? b->cache_note : NULL);
	json_bool(j, "pinned", b->o.pin);
}

static void json_side(struct json *j, const char *key, double user,
		      double sys, double usmb, double callsmb)
{
	json_obj_begin(j, key);
	json_f64(j, "cpu_user", user);
	json_f64(j, "cpu_sys", sys);
	json_f64(j, "cpu_usec_per_mb", usmb);
	json_f64(j, "syscalls_per_mb", callsmb);
	json_obj_end(j);
}

/* Throughput: median and spread in MB/s, and the median in Gbit/s. */
static void json_mbps(struct json *j, double median, double lo, double hi)
{
	json_obj_begin(j, "mb_per_s");
	json_f64(j, "median", median);
	json_f64(j, "min", lo);
	json_f64(j, "max", hi);
	json_obj_end(j);
	json_f64(j, "gbit_per_s", median * 8 / 1000);
}

static void json_cell(FILE *f, const struct bench *b,
		      const struct bench_cell *c)
{
	static const char *const keys[] = { "memcpy", "pipe", "iperf3",
					    "iperf3-l1M" };
	const struct bench_group *g = &b->groups[c->group];
	const struct bench_sum *s = &c->sum;
	struct json j;
	unsigned int i;

	json_common(&j, f, b, "cell");
	json_str(&j, "table", g->label[0] ? g->label : "main");
	json_str(&j, "src", bench_src_name(g->src));
	json_str(&j, "sink", bench_sink_name(g->sink));
	json_str(&j, "send", c->snd->name);
	json_str(&j, "recv", c->rcv->name);
	json_u64(&j, "buffer", c->sbsz);
	json_u64(&j, "recv_buffer", c->rbsz);
	json_u64(&j, "pipe", g->pipe);
	json_u64(&j, "streams", g->streams);
	json_u64(&j, "size", g->size);
	json_str(&j, "status", state_names[c->state]);
	json_str(&j, "reason", c->why[0] ? c->why : NULL);
	json_u64(&j, "runs", c->nruns);
	if (c->state == BENCH_OK) {
		json_str(&j, "verdict", c->runs[0].rcv.verdict);
		json_mbps(&j, s->mbps, s->mbps_min, s->mbps_max);
		json_side(&j, "sender", s->s_user, s->s_sys, s->s_usmb,
			  s->s_callsmb);
		json_side(&j, "receiver", s->r_user, s->r_sys, s->r_usmb,
			  s->r_callsmb);
		json_f64(&j, "machine_busy_pct", s->busy);
		json_f64(&j, "machine_busy_run_pct", s->busy_run);
		json_f64(&j, "retransmits", s->retrans);
		json_arr_begin(&j, "per_run_mb_per_s");
		for (i = 0; i < c->nruns; i++)
			json_f64(&j, NULL, c->runs[i].rcv.mbps);
		json_arr_end(&j);
		json_obj_begin(&j, "ratio");
		for (i = 0; i < 4; i++)
			if (bench_ref_find(b, keys[i]))
				json_f64(&j, keys[i], bench_ratio(b, c, keys[i]));
		json_obj_end(&j);
		json_bool(&j, "best_in_row", c->best);
	}
	json_end(&j);
}

static void json_ref(FILE *f, const struct bench *b, const struct bench_ref *r)
{
	struct json j;

	json_common(&j, f, b, "reference");
	json_str(&j, "key", r->key);
	json_str(&j, "name", r->name);
	json_bool(&j, "ok", r->ok);
	json_str(&j, "reason", r->why[0] ? r->why : NULL);
	json_u64(&j, "runs", r->n);
	if (r->ok) {
		json_mbps(&j, r->mbps, r->mbps_min, r->mbps_max);
		if (r->usec_per_mb >= 0)
			json_f64(&j, "cpu_usec_per_mb", r->usec_per_mb);
	}
	json_end(&j);
}

void bench_write_json(FILE *f, const struct bench *b)
{
	unsigned int i;

	for (i = 0; i < b->ncells; i++)
		json_cell(f, b, &b->cells[i]);
	for (i = 0; i < b->nrefs; i++)
		json_ref(f, b, &b->refs[i]);
}

/* Quoted as RFC 4180 says; commas in free text become ';' as well, so that
 * `cut -d,` and awk -F, count the same columns as a CSV parser. */
static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s == '\n' ? ' ' : *s == ',' ? ';' : *s, f);
	}
	fputs("\",", f);
}

static void csv_num(FILE *f, bool have, double v, bool last)
{
	if (have)
		fprintf(f, "%.6g", v);
	fputc(last ? '\n' : ',', f);
}

#define CSV_HEADER \
	"kind,table,src,sink,send,recv,buffer,recv_buffer,pipe,window,size," \
	"status,reason," \
	"verdict,runs,mb_s,mb_s_min,mb_s_max,gbit_s,send_user_s,send_sys_s," \
	"recv_user_s,recv_sys_s,send_usec_per_mb,recv_usec_per_mb," \
	"usec_per_mb_total,send_calls_per_mb,recv_calls_per_mb," \
	"machine_busy_pct,machine_busy_run_pct,retransmits,x_memcpy,x_pipe," \
	"x_iperf3,x_iperf3_l1m,best_in_row\n"

static void csv_cell(FILE *f, const struct bench *b, const struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	const struct bench_sum *s = &c->sum;
	bool ok = c->state == BENCH_OK;

	csv_str(f, "cell");
	csv_str(f, g->label[0] ? g->label : "main");
	csv_str(f, bench_src_name(g->src));
	csv_str(f, bench_sink_name(g->sink));
	csv_str(f, c->snd->name);
	csv_str(f, c->rcv->name);
	fprintf(f, "%llu,%llu,%u,%llu,%llu,", (unsigned long long)c->sbsz,
		(unsigned long long)c->rbsz, g->pipe,
		(unsigned long long)b->o.window, (unsigned long long)g->size);
	csv_str(f, state_names[c->state]);
	csv_str(f, c->why);
	csv_str(f, ok ? c->runs[0].rcv.verdict : "");
	fprintf(f, "%u,", c->nruns);
	csv_num(f, ok, s->mbps, false);
	csv_num(f, ok, s->mbps_min, false);
	csv_num(f, ok, s->mbps_max, false);
	csv_num(f, ok, s->mbps * 8 / 1000, false);
	csv_num(f, ok, s->s_user, false);
	csv_num(f, ok, s->s_sys, false);
	csv_num(f, ok, s->r_user, false);
	csv_num(f, ok, s->r_sys, false);
	csv_num(f, ok, s->s_usmb, false);
	csv_num(f, ok, s->r_usmb, false);
	csv_num(f, ok, s->s_usmb + s->r_usmb, false);
	csv_num(f, ok, s->s_callsmb, false);
	csv_num(f, ok, s->r_callsmb, false);
	csv_num(f, ok, s->busy, false);
	csv_num(f, ok, s->busy_run, false);
	csv_num(f, ok, s->retrans, false);
	csv_num(f, ok && bench_ref_find(b, "memcpy"), bench_ratio(b, c, "memcpy"), false);
	csv_num(f, ok && bench_ref_find(b, "pipe"), bench_ratio(b, c, "pipe"), false);
	csv_num(f, ok && bench_ref_find(b, "iperf3"), bench_ratio(b, c, "iperf3"), false);
	csv_num(f, ok && bench_ref_find(b, "iperf3-l1M"),
		bench_ratio(b, c, "iperf3-l1M"), false);
	csv_num(f, ok, c->best, true);
}

static void csv_ref(FILE *f, const struct bench *b, const struct bench_ref *r)
{
	int i;

	csv_str(f, "reference");
	csv_str(f, r->key);
	for (i = 0; i < 4; i++)
		csv_str(f, "");
	fprintf(f, ",,,%llu,,", (unsigned long long)b->o.window);
	csv_str(f, r->ok ? "ok" : "not measured");
	csv_str(f, r->ok ? r->name : r->why);
	csv_str(f, "");
	fprintf(f, "%u,", r->n);
	csv_num(f, r->ok, r->mbps, false);
	csv_num(f, r->ok, r->mbps_min, false);
	csv_num(f, r->ok, r->mbps_max, false);
	csv_num(f, r->ok, r->mbps * 8 / 1000, false);
	/* send/recv user/sys, per-side us/MB: not split for references. */
	for (i = 0; i < 6; i++)
		csv_num(f, false, 0, false);
	csv_num(f, r->ok && r->usec_per_mb >= 0, r->usec_per_mb, false);
	for (i = 0; i < 9; i++)
		csv_num(f, false, 0, false);
	csv_num(f, false, 0, true);
}

void bench_write_csv(FILE *f, const struct bench *b)
{
	unsigned int i;

	fputs(CSV_HEADER, f);
	for (i = 0; i < b->ncells; i++)
		csv_cell(f, b, &b->cells[i]);
	for (i = 0; i < b->nrefs; i++)
		csv_ref(f, b, &b->refs[i]);
	fflush(f);
}

/* Data file: one block per panel; a row per (table, send method), a column
 * per receive method; "-" where a cell has no figure. */
static int plot_data(const struct bench *b, const char *path,
		     const struct dnd_method *const *cols, unsigned int ncols)
{
	FILE *f = fopen(path, "we");
	unsigned int panel, gi, r, k, c;

	if (!f)
		return -errno;
	for (panel = 0; panel < 2; panel++) {
		fprintf(f, "%s\"cell\"", panel ? "\n\n" : "");
		for (k = 0; k < ncols; k++)
			fprintf(f, " \"%s\"", cols[k]->name);
		fputc('\n', f);
		for (gi = 0; gi < b->ngroups; gi++) {
			const struct bench_group *g = &b->groups[gi];

			for (r = 0; r < g->nrows; r++) {
				fprintf(f, "\"%s%s>%s %s\"", g->label[0] ?
					"best " : "", bench_src_name(g->src),
					bench_sink_name(g->sink),
					g->rows[r]->name);
				for (k = 0; k < ncols; k++) {
					const struct bench_cell *x = NULL;

					for (c = 0; c < g->ncols; c++)
						if (g->cols[c] == cols[k])
							x = &b->cells[g->first +
								r * g->ncols + c];
					if (!x || x->state != BENCH_OK)
						fputs(" -", f);
					else
						fprintf(f, " %.1f", panel ?
							x->sum.s_usmb + x->sum.r_usmb :
							x->sum.mbps);
				}
				fputc('\n', f);
			}
		}
	}
	return fclose(f) ? -errno : 0;
}

static int plot_script(const struct bench *b, const char *path,
		       const char *data, const char *out, bool svg,
		       unsigned int ncols)
{
	const struct bench_ref *ip = bench_ref_find(b, "iperf3-l1M");
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fprintf(f, "set terminal %s size 1400,1000 font \"sans,10\"%s\n",
		svg ? "svg" : "pngcairo", svg ? " dynamic" : "");
	fprintf(f, "set output '%s'\n", out);
	fprintf(f, "set datafile missing '-'\nset style data histograms\n"
		"set style histogram clustered gap 1\nset style fill solid 0.8 "
		"border -1\nset key outside right top\nset grid ytics\n"
		"set xtics rotate by 35 right scale 0 font \",9\"\nset yrange [0:*]\n"
		"set multiplot layout 2,1 title 'dnd bench: %s, Linux %s, %d "
		"CPUs'\n", b->facts.path, b->facts.kernel, b->facts.ncpu);
	fprintf(f, "set title 'throughput, MB/s (median of %u)%s'\n",
		b->o.repeat, ip ? "; line: iperf3 -l 1M" : "");
	fprintf(f, "plot for [i=2:%u] '%s' index 0 using i:xtic(1) "
		"title columnhead(i)", ncols + 1, data);
	if (ip)
		fprintf(f, ", %.1f with lines lw 2 lc rgb 'black' "
			"title 'iperf3 -l 1M'", ip->mbps);
	fprintf(f, "\nset title 'CPU us per MB, sender + receiver process'\n"
		"plot for [i=2:%u] '%s' index 1 using i:xtic(1) title "
		"columnhead(i)\nunset multiplot\n", ncols + 1, data);
	return fclose(f) ? -errno : 0;
}

int bench_plot(const struct bench *b, const char *path, const char *dir)
{
	const struct dnd_method *cols[BENCH_MAX_M * 2];
	unsigned int ncols = 0, gi, c, k;
	char data[320], script[320], exe[256], err[600];
	const char *dot = strrchr(path, '.');
	bool svg = dot && !strcmp(dot, ".svg");
	int r;

	for (gi = 0; gi < b->ngroups; gi++)
		for (c = 0; c < b->groups[gi].ncols; c++) {
			for (k = 0; k < ncols && cols[k] != b->groups[gi].cols[c]; k++)
				;
			if (k == ncols && ncols < BENCH_MAX_M * 2)
				cols[ncols++] = b->groups[gi].cols[c];
		}
	snprintf(data, sizeof(data), "%s/plot.dat", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	if (!bench_find_tool("gnuplot", exe, sizeof(exe))) {
		fprintf(stderr, "dnd: --plot needs gnuplot; apt-get install "
			"gnuplot-nox (or make deps)\n");
		return 1;
	}
	r = plot_data(b, data, cols, ncols);
	if (!r)
		r = plot_script(b, script, data, path, svg, ncols);
	if (r) {
		fprintf(stderr, "dnd: cannot write the plot files in %s: %s\n",
			dir, strerror(-r));
		return 1;
	}
	r = bench_run_tool((char *const[]){ exe, script, NULL }, NULL, 60, err,
			   sizeof(err));
	if (r) {
		fprintf(stderr, "dnd: gnuplot could not draw %s: %s\n", path, err);
		return 1;
	}
	return 0;
}
