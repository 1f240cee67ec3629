// SPDX-License-Identifier: MIT
/*
 * The text report. Tables keep the 2006 thread's reading order (send method
 * down the side, receive method across the top) and every figure that could
 * mislead carries its context: spread, CPU per side, the machine's load and
 * the reference rows measured in the same run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/bench_out.h"
#include "bench/bench_ref.h"
#include "xfer/method.h"
#include "cli/opts.h"

static const struct bench_cell *cell_at(const struct bench *b,
					const struct bench_group *g,
					unsigned int row, unsigned int col)
{
	return &b->cells[g->first + row * g->ncols + col];
}

void bench_mark_best(struct bench *b)
{
	unsigned int gi, r, c;

	for (gi = 0; gi < b->ngroups; gi++) {
		const struct bench_group *g = &b->groups[gi];

		for (r = 0; r < g->nrows; r++) {
			struct bench_cell *best = NULL;

			for (c = 0; c < g->ncols; c++) {
				struct bench_cell *x = &b->cells[g->first +
								 r * g->ncols + c];

				x->best = false;
				if (x->state == BENCH_OK &&
				    (!best || x->sum.mbps > best->sum.mbps))
					best = x;
			}
			if (best)
				best->best = true;
		}
	}
}

bool bench_has_total(const struct bench *b, const struct bench_cell *c)
{
	return c->state == BENCH_OK && c->sum.total > 0 &&
	       b->groups[c->group].sink == BENCH_SINK_FILE;
}

double bench_ratio(const struct bench *b, const struct bench_cell *c,
		   const char *key)
{
	const struct bench_ref *r = bench_ref_find(b, key);

	if (!r || c->state != BENCH_OK || r->mbps <= 0)
		return 0;
	/* The disk references measure a landing: file -> file cells only. */
	if (r->bytes && (b->groups[c->group].src != BENCH_SRC_FILE ||
			 b->groups[c->group].sink != BENCH_SINK_FILE))
		return 0;
	return c->sum.mbps / r->mbps;
}

/* " | -P 4" for a table of several streams, "" for one. */
static const char *bench_streams_text(const struct bench_group *g)
{
	static char buf[24];

	if (g->streams <= 1)
		return "";
	snprintf(buf, sizeof(buf), " | -P %u", g->streams);
	return buf;
}

static void print_header(FILE *f, const struct bench *b)
{
	char w[24];

	fprintf(f, "dnd bench: %s | %u run%s per cell | window %s | cache %s%s\n",
		b->facts.path, b->o.repeat, b->o.repeat == 1 ? "" : "s",
		b->o.window ? opt_fmt_size(b->o.window, w, sizeof(w)) :
		"-w 0 (kernel autotuning)",
		!b->o.cold ? "warm" : b->cold_failed ?
		"cold asked, not possible (see note): warm" :
		"cold (dropped before each file-source run)",
		b->o.pin ? " | pinned: sender CPU0, receiver CPU1" : "");
	fprintf(f, "machine: Linux %s, %d CPU%s, %s\n", b->facts.kernel,
		b->facts.ncpu, b->facts.ncpu == 1 ? "" : "s",
		b->facts.cpu_model);
	if (b->cache_note[0])
		fprintf(f, "note: %s\n", b->cache_note);
	fprintf(f, "MB/s = 10^6 bytes per second landed, timed by the receiver "
		"(to a file sink: until\nthe last byte is synced). Each run is "
		"a separate sender and receiver process.\nOther work on this "
		"machine moves these numbers: read them against the\nreference "
		"rows below, sampled between the cells of this same run.\n");
}

const char *bench_group_title(const struct bench_group *g, char *buf,
			      size_t len)
{
	char s[24], bs[24], ps[24];

	snprintf(buf, len, "%s%s%s -> %s | %s per run | buffer %s%s | pipe "
		 "%s%s", g->label[0] ? g->label : "", g->label[0] ? ": " : "",
		 bench_src_name(g->src), bench_sink_name(g->sink),
		 opt_fmt_size(g->size, s, sizeof(s)),
		 g->rbsz ? "send as in each row, recv " : "",
		 opt_fmt_size(g->rbsz ? g->rbsz : g->bsz, bs, sizeof(bs)),
		 g->pipe ? opt_fmt_size(g->pipe, ps, sizeof(ps)) :
			   "kernel default", bench_streams_text(g));
	return buf;
}

/* A matrix's figure: the headline MB/s, the CPU, or the total MB/s. */
enum matrix_kind { MATRIX_MBPS, MATRIX_CPU, MATRIX_TOTAL };

/* "median ±half%": half the min-max spread, in % of the median. */
static void spread_text(char *buf, size_t len, double med, double lo,
			double hi, const char *mark)
{
	snprintf(buf, len, "%.0f ±%.0f%%%s", med,
		 med > 0 ? 50 * (hi - lo) / med : 0, mark);
}

/* The text of one matrix entry; *note set for n/a, failed and same. */
static void cell_text(const struct bench_cell *c, enum matrix_kind k,
		      char *buf, size_t len)
{
	const struct bench_sum *s = &c->sum;

	switch (c->state) {
	case BENCH_OK:
		if (k == MATRIX_CPU)
			snprintf(buf, len, "%.0f+%.0f", s->s_usmb, s->r_usmb);
		else if (k == MATRIX_TOTAL)
			spread_text(buf, len, s->total, s->total_min,
				    s->total_max, "");
		else
			spread_text(buf, len, s->mbps, s->mbps_min,
				    s->mbps_max, c->best ? " *" : "");
		break;
	case BENCH_NA:
		snprintf(buf, len, "n/a (%d)", c->note);
		break;
	case BENCH_SAME:
		snprintf(buf, len, "= (%d)", c->note);
		break;
	case BENCH_FAILED:
		snprintf(buf, len, "FAILED (%d)", c->note);
		break;
	case BENCH_OFF:
		snprintf(buf, len, "-");
		break;
	default:
		snprintf(buf, len, "-");
		break;
	}
}

/* Pads s to width display columns ("±" is two bytes, one column). */
static void put_col(FILE *f, const char *s, int width)
{
	int cols = 0;
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++)
		cols += (*p & 0xc0) != 0x80;
	fprintf(f, "%s%*s", s, width > cols ? width - cols : 0, "");
}

const char *bench_row_name(const struct bench_group *g, unsigned int r,
			   char *buf, size_t len)
{
	char bs[24];

	if (!g->row_bsz[r])
		return g->rows[r]->name;
	snprintf(buf, len, "%s -b %s", g->rows[r]->name,
		 opt_fmt_size(g->row_bsz[r], bs, sizeof(bs)));
	return buf;
}

static int name_width(const struct dnd_method *const *m, unsigned int n,
		      int min)
{
	unsigned int i;
	int w = min;

	for (i = 0; i < n; i++)
		if ((int)strlen(m[i]->name) + 2 > w)
			w = (int)strlen(m[i]->name) + 2;
	return w;
}

static void print_matrix(FILE *f, const struct bench *b,
			 const struct bench_group *g, enum matrix_kind k)
{
	int rw = name_width(g->rows, g->nrows, g->rbsz ? 20 : 13);
	int cw = name_width(g->cols, g->ncols, 14);
	bool off = false;
	char buf[64];
	unsigned int r, c;

	if (k == MATRIX_CPU)
		fprintf(f, "CPU us/MB, send+recv process time (median)\n");
	else if (k == MATRIX_TOTAL)
		fprintf(f, "total MB/s, the time a user waits: the receiver's "
			"first byte to the\nverified file's rename and "
			"directory fsync (median ±half the spread)\n");
	else
		fprintf(f, "MB/s, median ±half the min-max spread of %u run%s; "
			"* fastest in its row\n", b->o.repeat,
			b->o.repeat == 1 ? "" : "s");
	put_col(f, "send\\recv", rw);
	for (c = 0; c < g->ncols; c++)
		put_col(f, g->cols[c]->name, cw);
	fputc('\n', f);
	for (r = 0; r < g->nrows; r++) {
		put_col(f, bench_row_name(g, r, buf, sizeof(buf)), rw);
		for (c = 0; c < g->ncols; c++) {
			const struct bench_cell *x = cell_at(b, g, r, c);

			off = off || x->state == BENCH_OFF;
			if (k == MATRIX_TOTAL && x->state == BENCH_OK &&
			    !bench_has_total(b, x))
				snprintf(buf, sizeof(buf), "-");
			else
				cell_text(x, k, buf, sizeof(buf));
			put_col(f, buf, cw);
		}
		fputc('\n', f);
	}
	if (off && k == MATRIX_MBPS)
		fprintf(f, "- not in the default set; --full runs every pair\n");
}

/* A cell's median steal from which the table says so, in % of all CPUs,
 * for cells whose timed part took half a second or more. */
#define DND_BENCH_STEAL_NOTE 2.0

static void print_notes(FILE *f, const struct bench *b,
			const struct bench_group *g)
{
	unsigned int i, n = g->nrows * g->ncols;
	double steal = 0;
	int printed = 0;

	/* Cells that share a reason share its number; print each once. */
	for (i = 0; i < n; i++) {
		const struct bench_cell *c = &b->cells[g->first + i];

		/* /proc/stat counts in ticks (10 ms): a short run's share
		 * is a few ticks and says little. */
		if (c->state == BENCH_OK && c->sum.steal > steal &&
		    (double)g->size >= c->sum.mbps * 1e6 * 0.5)
			steal = c->sum.steal;
		if (c->note <= printed)
			continue;
		fprintf(f, "(%d) %s\n", c->note, c->why);
		printed = c->note;
	}
	if (steal >= DND_BENCH_STEAL_NOTE)
		fprintf(f, "steal: up to %.1f%% of all CPUs in a cell (steal%% "
			"below): the host ran something else then, so those "
			"rates are lower than the code's\n", steal);
}

/* Appends " 1.23x" right-aligned in width, or "-" for no ratio. */
static void ratio_col(char *out, size_t len, int width, double x)
{
	size_t at = strlen(out);
	char v[24] = "-";

	if (x > 0)
		snprintf(v, sizeof(v), "%.2fx", x);
	snprintf(out + at, len - at, " %*s", width, v);
}

/* A side's CPU: total us/MB, and in brackets its user and system parts in
 * the same unit (medians; each run moved size bytes). */
static void cpu_col(char *out, size_t len, double usmb, double user,
		    double sys, uint64_t size)
{
	double mb = (double)size / 1e6;

	snprintf(out, len, "%.0f (%.0f/%.0f)", usmb,
		 mb > 0 ? user * 1e6 / mb : 0, mb > 0 ? sys * 1e6 / mb : 0);
}

static void print_details(FILE *f, const struct bench *b,
			  const struct bench_group *g)
{
	/* A file -> file table is read against the disk, others iperf3. */
	bool disk = g->src == BENCH_SRC_FILE && g->sink == BENCH_SINK_FILE &&
		    (bench_ref_find(b, "copy") || bench_ref_find(b, "device"));
	bool iperf = !disk && bench_ref_find(b, "iperf3-l1M") != NULL;
	unsigned int i, n = g->nrows * g->ncols;

	int sw = g->rbsz ? 20 : 12;

	fprintf(f, "%-*s %-12s %6s %-13s %6s %-20s %-20s %-11s %5s %6s %5s%s "
		"%s\n", sw, "send", "recv", "MB/s", "[min-max]", "Gbit/s",
		"snd us/MB (usr/sys)", "rcv us/MB (usr/sys)", "calls/MB",
		"busy%", "steal%", "retr", iperf ? " x-iperf3-l1M" : disk ?
		"  x-copy x-device" : "", "verdict");
	for (i = 0; i < n; i++) {
		const struct bench_cell *c = &b->cells[g->first + i];
		const struct bench_sum *s = &c->sum;
		char mm[32], sd[40], rd[40], calls[24], x[24] = "", sn[48];

		if (c->state != BENCH_OK)
			continue;
		bench_row_name(g, (unsigned int)(c - &b->cells[g->first]) / g->ncols,
			 sn, sizeof(sn));
		snprintf(mm, sizeof(mm), "[%.0f-%.0f]", s->mbps_min, s->mbps_max);
		cpu_col(sd, sizeof(sd), s->s_usmb, s->s_user, s->s_sys,
			g->size);
		cpu_col(rd, sizeof(rd), s->r_usmb, s->r_user, s->r_sys,
			g->size);
		snprintf(calls, sizeof(calls), "%.1f/%.1f", s->s_callsmb,
			 s->r_callsmb);
		if (iperf) {
			ratio_col(x, sizeof(x), 13, bench_ratio(b, c,
							       "iperf3-l1M"));
		} else if (disk) {
			ratio_col(x, sizeof(x), 7, bench_ratio(b, c, "copy"));
			ratio_col(x, sizeof(x), 8, bench_ratio(b, c, "device"));
		}
		fprintf(f, "%-*s %-12s %6.0f %-13s %6.2f %-20s %-20s %-11s %5.0f "
			"%6.1f %5.0f%s %s\n", sw, g->rbsz ? sn : c->snd->name,
			c->rcv->name, s->mbps, mm,
			s->mbps * 8 / 1000, sd, rd, calls, s->busy,
			s->steal, s->retrans, x, c->runs[0].rcv.verdict);
	}
}

static void print_refs(FILE *f, const struct bench *b)
{
	unsigned int i;

	fprintf(f, "\n== references, sampled %u time%s spread over this run "
		"==\n", b->o.repeat, b->o.repeat == 1 ? "" : "s");
	for (i = 0; i < b->nrefs; i++) {
		const struct bench_ref *r = &b->refs[i];

		if (!r->ok) {
			fprintf(f, "%-62s not measured: %s\n", r->name, r->why);
			continue;
		}
		fprintf(f, "%-62s %7.0f MB/s [%.0f-%.0f] %6.2f Gbit/s", r->name,
			r->mbps, r->mbps_min, r->mbps_max, r->mbps * 8 / 1000);
		if (r->usec_per_mb >= 0)
			fprintf(f, ", CPU %.0f us/MB", r->usec_per_mb);
		fprintf(f, ", steal %.1f%% (max %.1f%%)\n", r->steal_pct,
			r->steal_max_pct);
	}
}

const struct bench_cell *bench_group_best(const struct bench *b,
					 const struct bench_group *g)
{
	const struct bench_cell *best = NULL;
	unsigned int i;

	for (i = 0; i < g->nrows * g->ncols; i++) {
		const struct bench_cell *c = &b->cells[g->first + i];

		if (c->state == BENCH_OK && (!best || c->sum.mbps > best->sum.mbps))
			best = c;
	}
	return best;
}

static void print_ratios(FILE *f, const struct bench *b)
{
	static const char *const keys[] = { "memcpy", "pipe", "iperf3",
					    "iperf3-l1M", "copy", "device" };
	static const char *const names[] = { "memcpy", "pipe ceiling",
					     "iperf3 default", "iperf3 -l 1M",
					     "local copy", "device O_DIRECT" };
	unsigned int gi, k;
	char bs[24], ps[24];
	const char *sep;

	fprintf(f, "\n== fastest cell of each table, as ratios ==\n");
	for (gi = 0; gi < b->ngroups; gi++) {
		const struct bench_group *g = &b->groups[gi];
		const struct bench_cell *c = bench_group_best(b, g);

		if (!c)
			continue;
		fprintf(f, "%s%s%s -> %s (-b %s, pipe %s%s): %s -> %s %.0f MB/s",
			g->label, g->label[0] ? ", " : "", bench_src_name(g->src),
			bench_sink_name(g->sink),
			opt_fmt_size(c->sbsz, bs, sizeof(bs)),
			g->pipe ? opt_fmt_size(g->pipe, ps, sizeof(ps)) :
				  "default", bench_streams_text(g), c->snd->name,
			c->rcv->name, c->sum.mbps);
		for (k = 0, sep = " ="; k < 6; k++) {
			double x = bench_ratio(b, c, keys[k]);

			if (x > 0) {
				fprintf(f, "%s %.2fx %s", sep, x, names[k]);
				sep = ",";
			}
		}
		fputc('\n', f);
	}
}

/* The fastest zero -> null cell over every table (plain and best path):
 * the figure to hold against iperf3, which also reads no file. */
static void print_overall(FILE *f, const struct bench *b)
{
	const struct bench_cell *best = NULL;
	const struct bench_group *g;
	double x = 0;
	unsigned int i;
	char bs[24], rs[24];

	for (i = 0; i < b->ncells; i++) {
		const struct bench_cell *c = &b->cells[i];

		g = &b->groups[c->group];
		if (c->state == BENCH_OK && g->src == BENCH_SRC_ZERO &&
		    g->sink == BENCH_SINK_NULL &&
		    (!best || c->sum.mbps > best->sum.mbps))
			best = c;
	}
	if (!best)
		return;
	g = &b->groups[best->group];
	x = bench_ratio(b, best, "iperf3-l1M");
	fprintf(f, "fastest zero -> null pair: send -m %s -b %s, recv -m %s -b "
		"%s%s%s%s: %.0f MB/s", best->snd->name,
		opt_fmt_size(best->sbsz, bs, sizeof(bs)), best->rcv->name,
		opt_fmt_size(best->rbsz, rs, sizeof(rs)),
		g->label[0] ? " (" : "", g->label, g->label[0] ? ")" : "",
		best->sum.mbps);
	if (x > 0)
		fprintf(f, " = %.2fx iperf3 -l 1M", x);
	fputc('\n', f);
}

void bench_print(FILE *f, const struct bench *b)
{
	char title[200];
	unsigned int gi;

	print_header(f, b);
	for (gi = 0; gi < b->ngroups; gi++) {
		const struct bench_group *g = &b->groups[gi];

		fprintf(f, "\n== %s ==\n", bench_group_title(g, title,
							   sizeof(title)));
		print_matrix(f, b, g, MATRIX_MBPS);
		if (g->sink == BENCH_SINK_FILE) {
			fputc('\n', f);
			print_matrix(f, b, g, MATRIX_TOTAL);
		}
		fputc('\n', f);
		print_matrix(f, b, g, MATRIX_CPU);
		print_notes(f, b, g);
		fputc('\n', f);
		print_details(f, b, g);
	}
	print_refs(f, b);
	print_ratios(f, b);
	print_overall(f, b);
	fflush(f);
}
