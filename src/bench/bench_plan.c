// SPDX-License-Identifier: MIT
/*
 * The plan of a bench run: which tables (source, sink, buffer, pipe), which
 * cells in them, which cells cannot run and why, and which are left to
 * --full. Decided before anything is measured, so progress can count down.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_plan.h"
#include "bench/bench_run.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "core/pipe.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

uint64_t bench_size_for(const struct bench_opts *o, enum bench_sink k)
{
	if (o->size)
		return o->size;
	if (k == BENCH_SINK_NULL)
		return o->quick ? 32 * MiB : GiB;
	return o->quick ? 8 * MiB : 256 * MiB;
}

static struct bench_group *bench_add_group(struct bench *b, const char *label,
					   enum bench_src s, enum bench_sink k,
					   uint64_t bsz, unsigned int pipe)
{
	struct bench_group *g = &b->groups[b->ngroups++];

	memset(g, 0, sizeof(*g));
	snprintf(g->label, sizeof(g->label), "%s", label);
	g->src = s;
	g->sink = k;
	g->bsz = bsz;
	g->pipe = pipe;
	g->streams = 1;
	g->size = bench_size_for(&b->o, k);
	return g;
}

/*
 * The tuned set, into /dev/null from each source: the receiver reads 1 MiB
 * a call, the pipe is the biggest this user may have, and each sender gets
 * the buffer that served it best in paired runs against iperf3 -l 1M on the
 * development machine (uring: 64 KiB registered buffers, which it merges
 * into larger sends; the others 1 MiB). vmsplice from /dev/zero splices
 * the same zero pages again and again: no copy on either side.
 */
static void bench_plan_best(struct bench *b)
{
	static const struct { const char *name; uint64_t bsz; } rows[] = {
		{ "vmsplice", MiB }, { "rw", MiB }, { "uring", 64 << 10 },
		{ "sendfile", MiB }, { "splice", MiB },
	};
	unsigned int pipe = pipe_max_size(), s;
	size_t i;

	if (!pipe || pipe > MiB)
		pipe = MiB;
	for (s = 0; s < BENCH_SRC_COUNT; s++) {
		struct bench_group *g;

		if (!b->o.src[s] || !b->o.sink[BENCH_SINK_NULL])
			continue;
		g = bench_add_group(b, "best path", s, BENCH_SINK_NULL, MiB, pipe);
		g->rbsz = MiB;
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			const struct dnd_method *m = method_find(rows[i].name);

			if (!m || !m->send)
				continue;
			g->row_bsz[g->nrows] = rows[i].bsz;
			g->rows[g->nrows++] = m;
		}
		if (method_find("null"))
			g->cols[g->ncols++] = method_find("null");
		if (!g->nrows || !g->ncols)
			b->ngroups--;
	}
}

/* The tables of one source and sink: every buffer x pipe x streams. */
static void bench_plan_combo(struct bench *b, enum bench_src s,
			     enum bench_sink k)
{
	unsigned int bi, pi, si;

	for (bi = 0; bi < b->o.nbufs; bi++)
		for (pi = 0; pi < b->o.npipes; pi++)
			for (si = 0; si < b->o.nstreams; si++) {
				struct bench_group *g = bench_add_group(
					b, "", s, k, b->o.bufs[bi],
					b->o.pipes[pi]);

				g->streams = b->o.streams[si];
				memcpy(g->rows, b->o.send_m, sizeof(g->rows));
				memcpy(g->cols, b->o.recv_m, sizeof(g->cols));
				g->nrows = b->o.nsend;
				g->ncols = b->o.nrecv;
			}
}

static void bench_plan_groups(struct bench *b)
{
	unsigned int s, k;

	for (s = 0; s < BENCH_SRC_COUNT; s++)
		for (k = 0; k < BENCH_SINK_COUNT; k++)
			if (b->o.combo[s][k])
				bench_plan_combo(b, s, k);
	if (b->o.best_path)
		bench_plan_best(b);
}

/* Later tables of a --pipe-size sweep repeat the pairs without a pipe. */
static void bench_mark_same(struct bench *b, struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	char ps[24];

	if (c->state != BENCH_TODO || g->label[0] || g->pipe == b->o.pipes[0] ||
	    c->snd->flags & DND_M_PIPE || c->rcv->flags & DND_M_PIPE)
		return;
	c->state = BENCH_SAME;
	snprintf(c->why, sizeof(c->why), "no pipe on either side: measured "
		 "in the pipe %s table", b->o.pipes[0] ?
		 opt_fmt_size(b->o.pipes[0], ps, sizeof(ps)) : "kernel default");
}

/*
 * The default set keeps the run near a minute and still puts every method
 * on each side at least once: every sender into the plain receiver (null
 * for /dev/null, rw for a file), rw into every receiver, and each method
 * paired with itself (the 2006 program's natural pairs). --full runs the rest.
 */
static void bench_mark_off(const struct bench *b, struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	const char *plain = g->sink == BENCH_SINK_NULL ? "null" : "rw";

	if (c->state != BENCH_TODO || b->o.all_pairs || g->label[0] ||
	    !strcmp(c->snd->name, "rw") || !strcmp(c->rcv->name, plain) ||
	    c->snd == c->rcv)
		return;
	c->state = BENCH_OFF;
	snprintf(c->why, sizeof(c->why), "not in the default set; --full "
		 "runs every pair");
}

/* Groups, cells and run slots; 0 or -ENOMEM. */
int bench_plan(struct bench *b)
{
	unsigned int max = 4 * BENCH_MAX_LIST * BENCH_MAX_LIST * BENCH_MAX_LIST +
			   2, gi, r, c;

	b->groups = calloc(max, sizeof(*b->groups));
	if (!b->groups)
		return -ENOMEM;
	bench_plan_groups(b);
	for (gi = 0; gi < b->ngroups; gi++) {
		b->groups[gi].first = b->ncells;
		b->ncells += b->groups[gi].nrows * b->groups[gi].ncols;
	}
	b->cells = calloc(b->ncells ? b->ncells : 1, sizeof(*b->cells));
	if (!b->cells)
		return -ENOMEM;
	for (gi = 0; gi < b->ngroups; gi++) {
		struct bench_group *g = &b->groups[gi];

		/* --remote --reverse: the server makes its own source. */
		if (g->src == BENCH_SRC_FILE && g->size > b->src_size &&
		    !(b->o.remote && b->o.reverse))
			b->src_size = g->size;
		for (r = 0; r < g->nrows; r++)
			for (c = 0; c < g->ncols; c++) {
				struct bench_cell *x = &b->cells[g->first +
							r * g->ncols + c];

				x->group = gi;
				x->snd = g->rows[r];
				x->rcv = g->cols[c];
				x->sbsz = g->row_bsz[r] ? g->row_bsz[r] : g->bsz;
				x->rbsz = g->rbsz ? g->rbsz : g->bsz;
				x->runs = calloc(b->o.repeat, sizeof(*x->runs));
				if (!x->runs)
					return -ENOMEM;
				bench_cell_check(b, x);
				bench_mark_same(b, x);
				bench_mark_off(b, x);
			}
	}
	return 0;
}

/* Footnote numbers, shared by cells of a table with the same reason. */
void bench_number_notes(struct bench *b)
{
	unsigned int gi, i, j;

	for (gi = 0; gi < b->ngroups; gi++) {
		const struct bench_group *g = &b->groups[gi];
		struct bench_cell *c = &b->cells[g->first];
		unsigned int n = g->nrows * g->ncols;
		int next = 1;

		for (i = 0; i < n; i++) {
			if (c[i].state == BENCH_OK || c[i].state == BENCH_TODO ||
			    c[i].state == BENCH_OFF)
				continue;
			for (j = 0; j < i; j++)
				if (c[j].note && !strcmp(c[j].why, c[i].why))
					break;
			c[i].note = j < i ? c[j].note : next++;
		}
	}
}
