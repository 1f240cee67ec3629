// SPDX-License-Identifier: MIT
/*
 * The driver's watch over a running transfer: the progress line, -i
 * intervals, and streams run in threads of their own, the first failure
 * or a stop signal cutting the others' sockets. See xfer_watch.h.
 */
#include <sys/socket.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/io.h"
#include "core/net.h"
#include "xfer/xfer.h"
#include "xfer/xfer_watch.h"

/* How often a multi-stream run's watch wakes up, and the progress line is
 * redrawn at the most (twice a second, as rsync's). */
#define XFER_TICK_MS		50
#define XFER_PROGRESS_EVERY	0.5

void xfer_progress(struct xfer *t)
{
	uint64_t moved = atomic_load(&t->moved);
	double now, rate;
	char of[48] = "", eta[32] = "";

	if (!t->cfg.progress)
		return;
	now = stats_now();
	if (now < t->progress_next)
		return;
	if (!t->progress_next) {
		t->t0 = now;
		t->progress_next = now + XFER_PROGRESS_EVERY;
		return;
	}
	t->progress_next = now + XFER_PROGRESS_EVERY;
	rate = (double)moved / (now - t->t0);
	if (t->length != UINT64_MAX && t->length && moved <= t->length) {
		snprintf(of, sizeof(of), " of %.1f MiB (%.0f%%)",
			 (double)t->length / 1048576.0,
			 100.0 * (double)moved / (double)t->length);
		if (rate > 0)
			snprintf(eta, sizeof(eta), ", ETA %.0f s",
				 (double)(t->length - moved) / rate);
	}
	fprintf(stderr, "\r\033[K%s %.1f MiB%s at %.1f MB/s%s",
		t->cfg.sender ? "sent" : "received",
		(double)moved / 1048576.0, of, rate / 1e6, eta);
}

void xfer_progress_end(struct xfer *t)
{
	if (t->cfg.progress && t->progress_next)
		fprintf(stderr, "\r\033[K");
}

struct xfer_worker {
	struct dnd_xfer *x;
	int (*run)(struct dnd_xfer *x);
	int i;
	pthread_t tid;
	atomic_bool over;
	int r;
};

static void *xfer_worker_main(void *arg)
{
	struct xfer_worker *w = arg;

	int none = -1;

	w->x->t_begin = stats_now();
	w->r = w->run(w->x);
	w->x->t_end = stats_now();
	if (w->r)
		atomic_compare_exchange_strong(&w->x->t->first_bad, &none, w->i);
	atomic_store(&w->over, true);
	return NULL;
}

/*
 * Wakes every stream blocked on its socket: one failed, or a stop came. A
 * receiver's streams block only reading, and it still has to send its
 * reply, with the reason, on stream 0: it shuts reading alone.
 */
static void xfer_cut(struct xfer *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->st[i].sock >= 0)
			shutdown(t->st[i].sock,
				 t->cfg.sender ? SHUT_RDWR : SHUT_RD);
}

/* -i: what the transfer did since the last interval. */
struct xfer_ticker {
	double t0, next, last_t;
	uint64_t last_bytes;
	double last_user, last_sys;
	uint32_t last_retrans;
};

static void xfer_tcp(const struct xfer *t, uint32_t *retrans, uint32_t *rtt)
{
	uint64_t sum = 0;
	unsigned int i, n = 0;

	*retrans = 0;
	for (i = 0; i < t->n; i++) {
		struct tcp_info ti;

		if (t->st[i].sock < 0 || net_tcp_info(t->st[i].sock, &ti))
			continue;
		*retrans += ti.tcpi_total_retrans;
		sum += ti.tcpi_rtt;
		n++;
	}
	*rtt = n ? (uint32_t)(sum / n) : 0;
}

static void xfer_tick(struct xfer *t, struct xfer_ticker *k, bool last)
{
	struct xfer_interval iv = { .last = last };
	struct dnd_sample now;

	stats_sample(&now);
	if (!t->interval || (!last && now.mono < k->next))
		return;
	xfer_tcp(t, &iv.retrans, &iv.rtt_us);
	iv.start = k->last_t - k->t0;
	iv.end = now.mono - k->t0;
	iv.bytes = atomic_load(&t->moved) - k->last_bytes;
	iv.cpu_user = stats_tv(&now.ru.ru_utime) - k->last_user;
	iv.cpu_sys = stats_tv(&now.ru.ru_stime) - k->last_sys;
	iv.retrans -= k->last_retrans < iv.retrans ? k->last_retrans :
						     iv.retrans;
	k->last_retrans += iv.retrans;
	k->last_bytes += iv.bytes;
	k->last_user += iv.cpu_user;
	k->last_sys += iv.cpu_sys;
	k->last_t = now.mono;
	k->next += t->interval;
	if (iv.end > iv.start || iv.bytes)
		t->on_interval(&iv, t->interval_arg);
}

static void xfer_ticker_start(struct xfer *t, struct xfer_ticker *k)
{
	struct dnd_sample now;

	stats_sample(&now);
	memset(k, 0, sizeof(*k));
	k->t0 = k->last_t = now.mono;
	k->next = now.mono + t->interval;
	k->last_user = stats_tv(&now.ru.ru_utime);
	k->last_sys = stats_tv(&now.ru.ru_stime);
}

/*
 * Watches the workers until all are over: draws progress and intervals,
 * and on the first failure or a stop signal cuts the others' sockets so
 * they return.
 */
static void xfer_watch(struct xfer *t, struct xfer_worker *w)
{
	const struct timespec tick = { 0, XFER_TICK_MS * 1000000L };
	struct xfer_ticker k;
	bool cut = false;

	xfer_ticker_start(t, &k);
	for (;;) {
		unsigned int i, over = 0;

		for (i = 0; i < t->n; i++) {
			if (!atomic_load(&w[i].over))
				continue;
			over++;
			if (w[i].r && !cut) {
				xfer_cut(t);
				cut = true;
			}
		}
		if (over == t->n)
			break;
		if (io_stop_signal && !cut) {
			xfer_cut(t);
			cut = true;
		}
		xfer_progress(t);
		xfer_tick(t, &k, false);
		nanosleep(&tick, NULL);
	}
	xfer_tick(t, &k, true);
}

int xfer_run_threads(struct xfer *t, int (*run)(struct dnd_xfer *x))
{
	struct xfer_worker *w = calloc(t->n, sizeof(*w));
	unsigned int i, started = 0;
	int r = 0;

	if (!w)
		return xfer_fail(&t->st[0], -ENOMEM, "allocate stream threads");
	for (i = 0; i < t->n; i++, started++) {
		w[i].x = &t->st[i];
		w[i].run = run;
		w[i].i = (int)i;
		r = io_thread_start(&w[i].tid, xfer_worker_main, &w[i]);
		if (r)
			break;
	}
	if (r) {
		xfer_fail(&t->st[started], r, "start a stream thread");
		atomic_store(&t->first_bad, (int)started);
		for (i = started; i < t->n; i++)
			atomic_store(&w[i].over, true);
		w[started].r = r;
	}
	xfer_watch(t, w);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	free(w);
	return xfer_failed(t) ? xfer_failed(t)->err : 0;
}
