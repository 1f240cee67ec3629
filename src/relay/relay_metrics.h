/* SPDX-License-Identifier: MIT */
/* dnd relay --metrics: the summed stats of every loop as Prometheus text. */
#ifndef DND_RELAY_METRICS_H
#define DND_RELAY_METRICS_H

struct relay_shared;

/*
 * Starts /metrics (core/metrics.c) on o->metrics_host:o->metrics_port once
 * every loop is set up; each request sums the loops' published counters.
 * Says where on stderr. 0, or -EADDRINUSE (or another -errno) with the
 * cause printed.
 */
int relay_metrics_start(struct relay_shared *sh);

/* Stops it, before the loops are freed. */
void relay_metrics_stop(struct relay_shared *sh);

#endif
