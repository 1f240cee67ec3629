// SPDX-License-Identifier: MIT
/*
 * dnd relay --metrics: each scrape sums the loops' published counters
 * (relay_loops_sum, under each loop's lock) and writes them as Prometheus
 * text; the loops publish after every wakeup while it is on.
 */
#include <errno.h>
#include <stdio.h>

#include "core/log.h"
#include "core/metrics.h"
#include "relay/relay.h"
#include "relay/relay_loop.h"
#include "relay/relay_metrics.h"
#include "relay/relay_stats.h"
#include "relay/relay_types.h"

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void relay_render(struct metrics_text *t, void *arg)
{
	struct relay_stats s;

	relay_loops_sum(arg, &s);
	metrics_add(t, "relay_flows_accepted_total", "counter", "Client "
		    "connections accepted.", NULL, (double)s.accepted);
	metrics_add(t, "relay_flows_active", "gauge", "Flows open now.", NULL,
		    (double)s.active);
	metrics_add(t, "relay_flows_ended_total", "counter", "Flows that "
		    "ended, by how.", "how=\"completed\"", (double)s.completed);
	metrics_add(t, "relay_flows_ended_total", NULL, NULL,
		    "how=\"idle_closed\"", (double)s.idle_closed);
	metrics_add(t, "relay_flows_ended_total", NULL, NULL,
		    "how=\"grace_closed\"", (double)s.grace_closed);
	metrics_add(t, "relay_errors_total", "counter", "Flows that failed "
		    "or were reset, by cause.", "cause=\"target_failed\"",
		    (double)s.failed);
	metrics_add(t, "relay_errors_total", NULL, NULL,
		    "cause=\"peer_reset\"", (double)s.resets);
	metrics_add(t, "relay_errors_total", NULL, NULL,
		    "cause=\"relay_error\"", (double)s.errors);
	metrics_add(t, "relay_errors_total", NULL, NULL,
		    "cause=\"accept\"", (double)s.accept_errors);
	metrics_add(t, "relay_bytes_total", "counter", "Bytes delivered, by "
		    "direction.", "dir=\"client_to_target\"", (double)s.bytes[0]);
	metrics_add(t, "relay_bytes_total", NULL, NULL,
		    "dir=\"target_to_client\"", (double)s.bytes[1]);
	metrics_add(t, "relay_bytes_discarded_total", "counter", "Bytes "
		    "thrown away at a reset.", NULL, (double)s.bytes_discarded);
	metrics_add(t, "relay_splice_calls_total", "counter", "splice() calls "
		    "that moved bytes.", "dir=\"in\"", (double)s.splice_in_calls);
	metrics_add(t, "relay_splice_calls_total", NULL, NULL, "dir=\"out\"",
		    (double)s.splice_out_calls);
	metrics_add(t, "relay_splice_bytes_per_call", "gauge", "Mean bytes "
		    "per splice() call so far.", "dir=\"in\"",
		    ratio(s.splice_in_bytes, s.splice_in_calls));
	metrics_add(t, "relay_splice_bytes_per_call", NULL, NULL, "dir=\"out\"",
		    ratio(s.splice_out_bytes, s.splice_out_calls));
	metrics_add(t, "relay_copy_fallbacks_total", "counter", "Flows that "
		    "copied because no pipe was left.", NULL,
		    (double)s.fallbacks);
	metrics_add(t, "relay_pipes_alive", "gauge", "Pipes open, in use or "
		    "pooled.", NULL, (double)s.pipes_alive);
	metrics_add(t, "relay_wakeups_total", "counter", "epoll_wait returns "
		    "with events.", NULL, (double)s.wakeups);
}

int relay_metrics_start(struct relay_shared *sh)
{
	const struct relay_opts *o = sh->o;
	char at[96] = "", err[256];

	if (!o->metrics)
		return 0;
	sh->metrics = metrics_start(o->metrics_host, o->metrics_port, NULL,
				    NULL, at,
				    sizeof(at), err, sizeof(err));
	if (!sh->metrics) {
		log_err("relay: --metrics: %s", err);
		return -EADDRINUSE;
	}
	metrics_set_render(sh->metrics, relay_render, sh);
	if (!o->quiet)
		log_err("relay: metrics on http://%s/metrics", at);
	return 0;
}

void relay_metrics_stop(struct relay_shared *sh)
{
	metrics_stop(sh->metrics);
	sh->metrics = NULL;
}
