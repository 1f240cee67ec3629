/* SPDX-License-Identifier: MIT */
/*
 * The driver's watch over a running transfer (xfer_watch.c): progress,
 * intervals, and streams in threads. Only xfer.c calls these.
 */
#ifndef DND_XFER_WATCH_H
#define DND_XFER_WATCH_H

struct dnd_xfer;
struct xfer;

/* Redraws the progress line on stderr (at most twice a second), or ends it;
 * both do nothing unless t->cfg.progress. */
void xfer_progress(struct xfer *t);
void xfer_progress_end(struct xfer *t);

/*
 * Runs run(stream) for every stream of t, each in a thread of its own with
 * SIGINT/SIGTERM/SIGHUP blocked, while this thread draws progress and -i
 * intervals and, at the first failure or a stop signal, shuts down every
 * stream's socket so the others return. Returns 0, or the -errno of the
 * stream that failed first (t->first_bad).
 */
int xfer_run_threads(struct xfer *t, int (*run)(struct dnd_xfer *x));

#endif
