// SPDX-License-Identifier: MIT
/*
 * The bench chart's gnuplot script: the header block (machine, settings,
 * references), then per panel its axes and heatmap from the data file that
 * bench_plot.c wrote, with the colour scale. See bench_plot_script.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_out.h"
#include "bench/bench_plot_script.h"
#include "bench/bench_ref.h"
#include "cli/opts.h"
#include "core/stats.h"
#include "xfer/method.h"

/* A gnuplot double-quoted string ("\n" kept as a line break). */
void plot_gp_str(FILE *f, const char *s)
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

int plot_lines(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* A line of the header at pixel row y (from the top). */
static void plot_head_line(FILE *f, const struct plot *pl, int y,
			   const char *font, const char *text)
{
	fprintf(f, "set label ");
	plot_gp_str(f, text);
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
	plot_head_line(f, pl, y += PLOT_LINE, "sans,10",
		       "Into a file, (N) after it: the total MB/s, the time a "
		       "user waits, to the verified file's rename and "
		       "directory fsync (spreads: in the text report)");
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
		plot_gp_str(f, g->cols[k]->name);
		fprintf(f, " %u", k);
	}
	fputs(")\nset ytics (", f);
	for (k = 0; k < g->nrows; k++) {
		fputs(k ? ", " : "", f);
		plot_gp_str(f, bench_row_name(g, k, buf, sizeof(buf)));
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
	plot_gp_str(f, p->title);
	fprintf(f, " at screen %.5f, screen %.5f left font '%s,10'\n",
		(double)(p->x + 6) / pl->width,
		1 - (double)(p->y + 12) / pl->height, pl->bold);
	fputs("set label ", f);
	plot_gp_str(f, p->sub);
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

int plot_script(const struct plot *pl, const char *path,
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
	plot_gp_str(f, out);
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

