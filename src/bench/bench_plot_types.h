/* SPDX-License-Identifier: MIT */
/* The bench chart's layout, shared by bench_plot.c and bench_plot_script.c. */
#ifndef DND_BENCH_PLOT_TYPES_H
#define DND_BENCH_PLOT_TYPES_H

#include <stdbool.h>

#include "bench/bench_types.h"

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

#endif
