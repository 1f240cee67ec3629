// SPDX-License-Identifier: MIT
/*
 * The bench chart: one heatmap per table, send methods down and receive
 * methods across as in the text report and the 2006 thread, MB/s as colour and
 * as a figure with the CPU per MB under it. Panels are placed in pixels here so
 * that every cell has the same size whatever its table's shape.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_out.h"
#include "bench/bench_plot.h"
#include "bench/bench_plot_script.h"
#include "bench/bench_plot_types.h"
#include "bench/bench_proc.h"
#include "bench/bench_ref.h"
#include "cli/opts.h"
#include "core/stats.h"
#include "xfer/method.h"


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
	/* Into a file the total takes the spread's place: the cell is 124
	 * pixels wide (the text report has both). */
	if (bench_has_total(pl->b, c))
		snprintf(l1, len, "%.0f (%.0f)", s->mbps, s->total);
	else if (pl->b->o.repeat > 1 && s->mbps > 0)
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
			plot_gp_str(f, l1);
			fputc(' ', f);
			plot_gp_str(f, l2);
			fprintf(f, " %u %d\n", rgb, plot_framed(pl->b, g, k));
		}
	}
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
	pl.head = PLOT_LINE * (7 + (int)b->nrefs) + 20;
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
