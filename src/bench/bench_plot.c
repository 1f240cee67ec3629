// SPDX-License-Identifier: MIT
/*
 * The bench chart: one heatmap per table, send methods down and receive
 * methods across as in the text report and seed 000, MB/s as colour and as
 * a figure with the CPU per MB under it. Panels are placed in pixels here so
 * that every cell has the same size whatever its table's shape.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_out.h"
#include "bench/bench_plot.h"
#include "bench/bench_proc.h"
#include "bench/bench_ref.h"
#include "cli/opts.h"
#include "core/stats.h"
#include "xfer/method.h"

#define PLOT_CW	    124 /* cell width, pixels */
#define PLOT_CH	    52	/* cell height */
#define PLOT_NAMES  26	/* above the cells: the receive methods */
#define PLOT_TLINE  15	/* one line of a panel's title */
#define PLOT_MINP   340 /* narrowest panel, for its title */
#define PLOT_TEXT   400 /* a panel's title or subtitle */
#define PLOT_LEFT   10	/* page margin */
#define PLOT_BOTTOM 16
#define PLOT_RIGHT  16
#define PLOT_GAP    30	 /* between panels */
#define PLOT_MAXW   1560 /* a row of panels wraps past this */
#define PLOT_LINE   19	 /* one line of the header */
#define PLOT_MINW   1320 /* the header's lines and its colour scale */

enum plot_state { /* column 3 of the data file */
	PLOT_OK = 0,
	PLOT_NA,
	PLOT_OFF, /* not in the default set, or not run */
	PLOT_FAILED,
	PLOT_SAME,
	PLOT_NSTATES,
};

struct plot_panel {
	const struct bench_group *g;
	unsigned int row;      /* row of panels it sits in */
	int x, y, w, h, lw;    /* pixels from the top left; lw: names */
	int top;	       /* title and names above the cells */
	char title[PLOT_TEXT]; /* wrapped to the panel's width */
	char sub[PLOT_TEXT];   /* its fastest cell */
	bool has[PLOT_NSTATES];
	bool best; /* a cell is marked fastest in its row */
};

struct plot {
	const struct bench *b;
	struct plot_panel *p;
	unsigned int n;
	int width, height, head; /* canvas and header block, pixels */
	double cbmin, cbmax;	 /* the colour scale (log), MB/s */
	const char *bold;	 /* font for the figures that lead */
};

static enum plot_state plot_state_of(const struct bench_cell *c)
{
	switch (c->state) {
	case BENCH_OK:
		return PLOT_OK;
	case BENCH_NA:
		return PLOT_NA;
	case BENCH_FAILED:
		return PLOT_FAILED;
	case BENCH_SAME:
		return PLOT_SAME;
	default:
		return PLOT_OFF;
	}
}

/* A gnuplot double-quoted string ("\n" kept as a line break). */
static void gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* Appends piece to buf (size PLOT_TEXT) after sep, or after sep's mark and
 * a line break when the line would pass max characters. */
static void plot_wrap(char *buf, int *col, int max, const char *sep,
		      const char *piece)
{
	size_t o = strlen(buf);
	int n = (int)strlen(piece);

	if (*col && *col + (int)strlen(sep) + n > max) {
		/* "a |", "a," or "a =" ends the line; the next starts clean. */
		int mark = (int)strlen(sep);

		while (mark && sep[mark - 1] == ' ')
			mark--;
		snprintf(buf + o, PLOT_TEXT - o, "%.*s\n%s", mark, sep, piece);
		*col = n;
		return;
	}
	snprintf(buf + o, PLOT_TEXT - o, "%s%s", *col ? sep : "", piece);
	*col += (*col ? (int)strlen(sep) : 0) + n;
}

static int plot_lines(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/*
 * The title: the table as the text report names it; under it the fastest
 * cell against the references. Both wrapped to the panel; sets how much
 * room they and the column names take above the cells.
 */
static void plot_title(const struct bench *b, struct plot_panel *p)
{
	static const char *const keys[] = { "memcpy", "pipe", "iperf3-l1M" };
	static const char *const names[] = { "memcpy", "pipe ceiling",
					     "iperf3 -l 1M" };
	const struct bench_cell *c = bench_group_best(b, p->g);
	int col = 0, max = (p->w - 12) / 7;
	char t[200], *piece, *save = NULL;
	unsigned int k;

	p->title[0] = p->sub[0] = '\0';
	bench_group_title(p->g, t, sizeof(t));
	for (piece = strtok_r(t, "|", &save); piece;
	     piece = strtok_r(NULL, "|", &save)) {
		size_t n;

		piece += strspn(piece, " ");
		for (n = strlen(piece); n && piece[n - 1] == ' ';)
			piece[--n] = '\0';
		plot_wrap(p->title, &col, max, " | ", piece);
	}
	for (k = 0, col = 0; c && k < 4; k++) {
		double x = k ? bench_ratio(b, c, keys[k - 1]) : 0;

		if (!k)
			snprintf(t, sizeof(t), "fastest: %s -> %s %.0f MB/s",
				 c->snd->name, c->rcv->name, c->sum.mbps);
		else if (x > 0)
			snprintf(t, sizeof(t), "%.2fx %s", x, names[k - 1]);
		else
			continue;
		plot_wrap(p->sub, &col, max, k == 1 ? " = " : ", ", t);
	}
	p->top = 10 + plot_lines(p->title) * PLOT_TLINE + PLOT_NAMES +
		 (p->sub[0] ? plot_lines(p->sub) * (PLOT_TLINE - 2) : 0);
}

/* Cell k of g gets the "fastest in its row" frame: it is the fastest, and
 * its row has another cell that ran to be faster than. */
static bool plot_framed(const struct bench *b, const struct bench_group *g,
			unsigned int k)
{
	unsigned int c, row = k / g->ncols, ran = 0;

	for (c = 0; c < g->ncols; c++)
		ran += b->cells[g->first + row * g->ncols + c].state ==
		       BENCH_OK;
	return b->cells[g->first + k].best && ran > 1;
}

/* Sizes of one panel, and what it holds (so no empty plot is asked for:
 * gnuplot warns about those). */
static void plot_measure(const struct bench *b, struct plot_panel *p)
{
	const struct bench_group *g = p->g;
	unsigned int r, i;
	char buf[64];
	int longest = 9;

	for (r = 0; r < g->nrows; r++) {
		int len = (int)strlen(bench_row_name(g, r, buf, sizeof(buf)));

		longest = len > longest ? len : longest;
	}
	p->lw = 8 * longest + 22;
	p->w = p->lw + (int)g->ncols * PLOT_CW + PLOT_RIGHT;
	p->w = p->w < PLOT_MINP ? PLOT_MINP : p->w;
	plot_title(b, p);
	p->h = p->top + (int)g->nrows * PLOT_CH + PLOT_BOTTOM;
	for (i = 0; i < g->nrows * g->ncols; i++) {
		const struct bench_cell *c = &b->cells[g->first + i];

		p->has[plot_state_of(c)] = true;
		p->best = p->best || plot_framed(b, g, i);
	}
}

/* First fit: each panel goes into the first row of panels with room. */
static int plot_layout(struct plot *pl)
{
	int *used = calloc(pl->n, sizeof(*used)),
	    *rh = calloc(pl->n, sizeof(*rh));
	unsigned int i, r, nrows = 0;
	int y;

	if (!used || !rh) {
		free(used);
		free(rh);
		return -ENOMEM;
	}
	pl->width = PLOT_MINW;
	for (i = 0; i < pl->n; i++) {
		struct plot_panel *p = &pl->p[i];

		for (r = 0; r < nrows; r++)
			if (used[r] + PLOT_GAP + p->w <= PLOT_MAXW)
				break;
		if (r == nrows)
			nrows++;
		p->row = r;
		p->x = used[r] ? used[r] + PLOT_GAP : PLOT_LEFT;
		used[r] = p->x + p->w;
		rh[r] = p->h > rh[r] ? p->h : rh[r];
		pl->width = used[r] > pl->width ? used[r] : pl->width;
	}
	for (r = 0, y = pl->head; r < nrows; r++) {
		for (i = 0; i < pl->n; i++)
			if (pl->p[i].row == r)
				pl->p[i].y = y;
		y += rh[r] + PLOT_GAP / 2;
	}
	pl->height = y;
	free(used);
	free(rh);
	return 0;
}

/* The two lines of a cell and the colour its text needs to be read. */
static void plot_cell_text(const struct plot *pl, const struct bench_cell *c,
			   char *l1, char *l2, size_t len, unsigned int *rgb)
{
	const struct bench_sum *s = &c->sum;
	static const char *const what[PLOT_NSTATES][2] = {
		[PLOT_NA] = { "n/a", "cannot run" },
		[PLOT_OFF] = { "-", "" },
		[PLOT_FAILED] = { "FAILED", "see the report" },
		[PLOT_SAME] = { "same", "as another cell" },
	};
	enum plot_state st = plot_state_of(c);

	*rgb = 0x555555;
	if (st != PLOT_OK) {
		snprintf(l1, len, "%s",
			 c->state == BENCH_TODO ? "not run" : what[st][0]);
		snprintf(l2, len, "%s",
			 c->state == BENCH_TODO ? "" : what[st][1]);
		return;
	}
	if (pl->b->o.repeat > 1 && s->mbps > 0)
		snprintf(l1, len, "%.0f ±%.0f%%", s->mbps,
			 50 * (s->mbps_max - s->mbps_min) / s->mbps);
	else
		snprintf(l1, len, "%.0f", s->mbps);
	snprintf(l2, len, "%.0f+%.0f µs/MB", s->s_usmb, s->r_usmb);
	/* The palette's lower half is dark: white text there. */
	*rgb = log(s->mbps / pl->cbmin) < 0.55 * log(pl->cbmax / pl->cbmin)
		       ? 0xffffff
		       : 0;
}

/* Data file: one block per table; a line per cell: x y state MB/s "line 1"
 * "line 2" text-colour best. */
static int plot_data(const struct plot *pl, const char *path)
{
	FILE *f = fopen(path, "we");
	char l1[64], l2[64];
	unsigned int i, k;

	if (!f)
		return -errno;
	for (i = 0; i < pl->n; i++) {
		const struct bench_group *g = pl->p[i].g;

		fputs(i ? "\n\n" : "", f);
		for (k = 0; k < g->nrows * g->ncols; k++) {
			const struct bench_cell *c =
				&pl->b->cells[g->first + k];
			unsigned int rgb;

			plot_cell_text(pl, c, l1, l2, sizeof(l1), &rgb);
			fprintf(f, "%u %u %d %.3f ", k % g->ncols, k / g->ncols,
				plot_state_of(c),
				c->state == BENCH_OK ? c->sum.mbps : 0.0);
			gp_str(f, l1);
			fputc(' ', f);
			gp_str(f, l2);
			fprintf(f, " %u %d\n", rgb, plot_framed(pl->b, g, k));
		}
	}
	return fclose(f) ? -errno : 0;
}

/* A line of the header at pixel row y (from the top). */
static void plot_head_line(FILE *f, const struct plot *pl, int y,
			   const char *font, const char *text)
{
	fprintf(f, "set label ");
	gp_str(f, text);
	fprintf(f, " at screen %.5f, screen %.5f font '%s'\n", 14.0 / pl->width,
		1 - (double)y / pl->height, font);
}

/* What the chart is: machine, settings, how to read a cell, references. */
static void plot_header(FILE *f, const struct plot *pl)
{
	const struct bench *b = pl->b;
	char line[400], w[24], font[32];
	unsigned int i;
	int y = 24;

	snprintf(line, sizeof(line), "dnd bench: %s | Linux %s | %d CPU%s, %s",
		 b->facts.path, b->facts.kernel, b->facts.ncpu,
		 b->facts.ncpu == 1 ? "" : "s", b->facts.cpu_model);
	snprintf(font, sizeof(font), "%s,14", pl->bold);
	plot_head_line(f, pl, y, font, line);
	snprintf(line, sizeof(line),
		 "%u run%s per cell | window %s | cache "
		 "%s%s",
		 b->o.repeat, b->o.repeat == 1 ? "" : "s",
		 b->o.window ? opt_fmt_size(b->o.window, w, sizeof(w))
			     : "autotuning",
		 b->o.cold && !b->cold_failed ? "cold" : "warm",
		 b->o.pin ? " | sender on CPU0, receiver on CPU1" : "");
	plot_head_line(f, pl, y += PLOT_LINE + 4, "sans,10", line);
	plot_head_line(
		f, pl, y += PLOT_LINE, "sans,10",
		"A cell: MB/s landed "
		"(10^6 bytes/s, median; colour and figure), under it the "
		"CPU time of the sender + receiver process per MB");
	plot_head_line(
		f, pl, y += PLOT_LINE, "sans,10",
		"Black frame: fastest"
		" in its row | hatched n/a: these methods cannot do this "
		"| grey -: not in the default set (--full runs it)");
	snprintf(font, sizeof(font), "%s,10", pl->bold);
	plot_head_line(f, pl, y += PLOT_LINE + 6, font,
		       "References, measured in this run:");
	for (i = 0; i < b->nrefs; i++) {
		const struct bench_ref *r = &b->refs[i];

		if (!r->ok)
			snprintf(line, sizeof(line), "%s: not measured (%s)",
				 r->name, r->why);
		else if (r->usec_per_mb >= 0)
			snprintf(line, sizeof(line),
				 "%s: %.0f MB/s, CPU %.0f "
				 "µs/MB",
				 r->name, r->mbps, r->usec_per_mb);
		else
			snprintf(line, sizeof(line), "%s: %.0f MB/s", r->name,
				 r->mbps);
		plot_head_line(f, pl, y += PLOT_LINE, "sans,10", line);
	}
}

/* Axis names and the screen box of one panel. */
static void plot_axes(FILE *f, const struct plot *pl,
		      const struct plot_panel *p)
{
	const struct bench_group *g = p->g;
	char buf[64];
	unsigned int k;

	fprintf(f,
		"set lmargin at screen %.5f\nset rmargin at screen %.5f\n"
		"set tmargin at screen %.5f\nset bmargin at screen %.5f\n",
		(double)(p->x + p->lw) / pl->width,
		(double)(p->x + p->lw + (int)g->ncols * PLOT_CW) / pl->width,
		1 - (double)(p->y + p->top) / pl->height,
		1 - (double)(p->y + p->h - PLOT_BOTTOM) / pl->height);
	fprintf(f,
		"set xrange [-0.5:%u.5]\nset x2range [-0.5:%u.5]\n"
		"set yrange [%u.5:-0.5]\nset x2tics (",
		g->ncols - 1, g->ncols - 1, g->nrows - 1);
	for (k = 0; k < g->ncols; k++) {
		fputs(k ? ", " : "", f);
		gp_str(f, g->cols[k]->name);
		fprintf(f, " %u", k);
	}
	fputs(")\nset ytics (", f);
	for (k = 0; k < g->nrows; k++) {
		fputs(k ? ", " : "", f);
		gp_str(f, bench_row_name(g, k, buf, sizeof(buf)));
		fprintf(f, " %u", k);
	}
	fputs(")\n", f);
}

/* One plot clause per kind of cell the panel holds. */
static void plot_panel(FILE *f, const struct plot *pl,
		       const struct plot_panel *p, unsigned int i,
		       const char *data)
{
	static const char *const fill[PLOT_NSTATES] = {
		[PLOT_NA] =
			"fs pattern 4 border lc rgb '#ffffff' lc rgb '#9a9a9a'",
		[PLOT_OFF] =
			"fs solid 1 border lc rgb '#ffffff' fc rgb '#e6e6e6'",
		[PLOT_FAILED] =
			"fs solid 1 border lc rgb '#ffffff' fc rgb '#f08080'",
		[PLOT_SAME] =
			"fs solid 1 border lc rgb '#ffffff' fc rgb '#d8d8ec'",
	};
	const char *sep = "plot ";
	int st;

	plot_axes(f, pl, p);
	fputs("set label ", f);
	gp_str(f, p->title);
	fprintf(f, " at screen %.5f, screen %.5f left font '%s,10'\n",
		(double)(p->x + 6) / pl->width,
		1 - (double)(p->y + 12) / pl->height, pl->bold);
	fputs("set label ", f);
	gp_str(f, p->sub);
	fprintf(f, " at screen %.5f, screen %.5f left font 'sans,9'\n",
		(double)(p->x + 6) / pl->width,
		1 - (double)(p->y + 14 + plot_lines(p->title) * PLOT_TLINE) /
				pl->height);
	for (st = 0; st < PLOT_NSTATES; st++) {
		if (!p->has[st])
			continue;
		fprintf(f,
			"%s'%s' index %u using ($3 == %d ? $1 : NaN):2:"
			"(0.5):(0.5)%s with boxxyerror %s notitle",
			sep, data, i, st, st == PLOT_OK ? ":4" : "",
			st == PLOT_OK
				? "fs solid 1 border lc rgb '#ffffff' fc palette"
				: fill[st]);
		sep = ", \\\n     ";
	}
	if (p->best)
		fprintf(f,
			"%s'%s' index %u using ($8 != 0 ? $1 : NaN):2:(0.46):"
			"(0.44) with boxxyerror fs empty lc rgb '#000000' "
			"lw 2.5 notitle",
			sep, data, i);
	fprintf(f,
		"%s'%s' index %u using 1:($2 - 0.13):5:7 with labels "
		"font '%s,12' tc rgb variable notitle, \\\n     "
		"'%s' index %u using 1:($2 + 0.24):6:7 with labels font "
		"'sans,8' tc rgb variable notitle\n",
		sep, data, i, pl->bold, data, i);
}

/* Colour scale ticks at 1, 2, 5 x 10^n, or finer steps when that gives
 * fewer than three: a log scale gets few of its own. */
static void plot_cbtics(FILE *f, const struct plot *pl)
{
	static const double m[3][9] = { { 1, 2, 5 },
					{ 1, 2, 3, 5, 7 },
					{ 1, 2, 3, 4, 5, 6, 7, 8, 9 } };
	double d, lo = pow(10, floor(log10(pl->cbmin)));
	int pass, k, n = 0;

	for (pass = 0; pass < 3 && n < 3; pass++) {
		fputs("set cbtics (", f);
		for (n = 0, d = lo; d <= pl->cbmax; d *= 10)
			for (k = 0; k < 9 && m[pass][k] > 0; k++)
				if (d * m[pass][k] >= pl->cbmin &&
				    d * m[pass][k] <= pl->cbmax)
					fprintf(f, "%s\"%.0f\" %.0f",
						n++ ? ", " : "", d * m[pass][k],
						d * m[pass][k]);
		fputs(")\n", f);
	}
}

static int plot_script(const struct plot *pl, const char *path,
		       const char *data, const char *out, bool svg)
{
	FILE *f = fopen(path, "we");
	bool bar = false;
	unsigned int i;

	if (!f)
		return -errno;
	fprintf(f,
		"set terminal %s size %d,%d font 'sans,10' noenhanced%s\n"
		"set output ",
		svg ? "svg" : "pngcairo", pl->width, pl->height,
		svg ? " dynamic background '#ffffff'"
		    : " background '#ffffff'");
	gp_str(f, out);
	fprintf(f,
		"\nset encoding utf8\nset datafile missing '-'\n"
		"set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 "
		"'#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
		"set logscale cb\nset cbrange [%.3f:%.3f]\nset cbtics out "
		"nomirror\nset cblabel 'MB/s, log scale' offset 0,0.6\n"
		"\nunset xtics\nunset key\nset link x2\n"
		"set x2tics scale 0 nomirror font ',10'\nset ytics scale 0 "
		"nomirror font ',10'\nset border 0\nset multiplot\n",
		pl->cbmin, pl->cbmax);
	plot_cbtics(f, pl);
	plot_header(f, pl);
	for (i = 0; i < pl->n; i++) {
		/* The colour scale once, in the header, with the first panel
		 * that uses the palette; the header labels only once too. */
		if (!bar && pl->p[i].has[PLOT_OK]) {
			fprintf(f,
				"set colorbox user horizontal origin screen "
				"%.5f, screen %.5f size screen %.5f, screen "
				"%.5f\n",
				1 - 430.0 / pl->width, 1 - 52.0 / pl->height,
				400.0 / pl->width, 14.0 / pl->height);
			bar = true;
		} else {
			fputs("unset colorbox\n", f);
		}
		plot_panel(f, pl, &pl->p[i], i, (const char *)data);
		fputs("unset label\n", f);
	}
	fputs("unset multiplot\n", f);
	return fclose(f) ? -errno : 0;
}

/* Runs gnuplot on the script; passes on what it says even on success. */
static int plot_run(const char *script, const char *out)
{
	char exe[256], why[600];
	char *argv[] = { exe, (char *)script, NULL };
	struct bench_child c;
	const char *p;
	bool ok;
	int r;

	if (!bench_find_tool("gnuplot", exe, sizeof(exe))) {
		fprintf(stderr, "dnd: --plot needs gnuplot; apt-get install "
				"gnuplot-nox (or make deps)\n");
		return 1;
	}
	r = bench_spawn(&c, argv, NULL, -1);
	if (r) {
		fprintf(stderr, "dnd: cannot start %s: %s\n", exe,
			strerror(-r));
		return 1;
	}
	r = bench_wait(&c, 1, stats_now() + 60, 60);
	ok = !r && bench_child_ok(&c);
	if (!ok)
		fprintf(stderr, "dnd: gnuplot could not draw %s: %s\n", out,
			bench_child_why(&c, why, sizeof(why)));
	for (p = c.err; ok && *p;
	     p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n'))
		if (p[strspn(p, " \t\n")] && *p != '\n')
			fprintf(stderr, "dnd: gnuplot: %.*s\n",
				(int)strcspn(p, "\n"), p);
	bench_child_free(&c);
	return ok ? 0 : 1;
}

int bench_plot(const struct bench *b, const char *path, const char *dir)
{
	struct plot pl = { .b = b, .n = b->ngroups, .cbmin = 1e300 };
	const char *dot = strrchr(path, '.');
	char data[320], script[320];
	unsigned int i;
	int r = -ENOMEM;

	pl.p = calloc(pl.n ? pl.n : 1, sizeof(*pl.p));
	for (i = 0; i < b->ncells; i++)
		if (b->cells[i].state == BENCH_OK && b->cells[i].sum.mbps > 0) {
			pl.cbmin = fmin(pl.cbmin, b->cells[i].sum.mbps);
			pl.cbmax = fmax(pl.cbmax, b->cells[i].sum.mbps);
		}
	/* Room at both ends, so no cell sits on the scale's edge. */
	pl.cbmin = pl.cbmax > 0 ? pl.cbmin / 1.15 : 1;
	pl.cbmax = pl.cbmax > 0 ? pl.cbmax * 1.05 : 10;
	pl.head = PLOT_LINE * (6 + (int)b->nrefs) + 20;
	for (i = 0; pl.p && i < pl.n; i++) {
		pl.p[i].g = &b->groups[i];
		plot_measure(b, &pl.p[i]);
	}
	snprintf(data, sizeof(data), "%s/plot.dat", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	/* The svg terminal passes "sans:Bold" on as a family name that no
	 * viewer knows: plain sans there. */
	pl.bold = dot && !strcmp(dot, ".svg") ? "sans" : "sans:Bold";
	if (pl.p)
		r = plot_layout(&pl);
	if (!r)
		r = plot_data(&pl, data);
	if (!r)
		r = plot_script(&pl, script, data, path,
				dot && !strcmp(dot, ".svg"));
	free(pl.p);
	if (r) {
		fprintf(stderr, "dnd: cannot write the plot files in %s: %s\n",
			dir, strerror(-r));
		return 1;
	}
	return plot_run(script, path);
}
