// SPDX-License-Identifier: MIT
/* The relay's stats as text lines or one JSON line (type "relay_stats"). */
#include <stdio.h>

#include "core/json.h"
#include "relay/relay.h"
#include "relay/relay_stats.h"

double relay_bytes_per_splice(const struct relay_stats *st)
{
	return st->splice_in_calls ? (double)st->splice_in_bytes /
				     (double)st->splice_in_calls : 0;
}

static double relay_div(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void relay_stats_json(const struct relay_opts *o,
			     const struct relay_stats *st, FILE *f)
{
	struct json j;

	json_begin_doc(&j, f, "relay_stats");
	json_str(&j, "mode", o->mode == DND_RELAY_SPLICE ? "splice" : "rw");
	json_f64(&j, "seconds", st->seconds);
	json_u64(&j, "accepted", st->accepted);
	json_u64(&j, "active", st->active);
	json_u64(&j, "peak_active", st->peak_active);
	json_u64(&j, "failed", st->failed);
	json_u64(&j, "completed", st->completed);
	json_u64(&j, "resets", st->resets);
	json_u64(&j, "errors", st->errors);
	json_u64(&j, "idle_closed", st->idle_closed);
	json_u64(&j, "grace_closed", st->grace_closed);
	json_u64(&j, "accept_errors", st->accept_errors);
	json_u64(&j, "listener_pauses", st->listener_pauses);
	json_u64(&j, "bytes_client_to_target", st->bytes[0]);
	json_u64(&j, "bytes_target_to_client", st->bytes[1]);
	json_u64(&j, "bytes_discarded", st->bytes_discarded);
	json_u64(&j, "urgent_copies", st->urgent_copies);
	json_u64(&j, "splice_in_calls", st->splice_in_calls);
	json_u64(&j, "splice_in_bytes", st->splice_in_bytes);
	json_f64(&j, "bytes_per_splice_in", relay_bytes_per_splice(st));
	json_u64(&j, "splice_out_calls", st->splice_out_calls);
	json_u64(&j, "splice_out_bytes", st->splice_out_bytes);
	json_f64(&j, "bytes_per_splice_out",
		 relay_div(st->splice_out_bytes, st->splice_out_calls));
	json_u64(&j, "read_calls", st->read_calls);
	json_u64(&j, "read_bytes", st->read_bytes);
	json_u64(&j, "write_calls", st->write_calls);
	json_u64(&j, "write_bytes", st->write_bytes);
	json_u64(&j, "eagain_pipe_full", st->eagain_pipe_full);
	json_u64(&j, "eagain_empty", st->eagain_empty);
	json_u64(&j, "eagain_out", st->eagain_out);
	json_u64(&j, "fallbacks", st->fallbacks);
	json_u64(&j, "pipes_created", st->pipes_created);
	json_u64(&j, "pipes_peak", st->pipes_peak);
	json_u64(&j, "pipe_size", st->pipe_size_min);
	json_u64(&j, "pipes_small", st->pipes_small);
	json_u64(&j, "pipes_failed", st->pipes_failed);
	json_u64(&j, "pipes_max", st->pipes_max);
	json_u64(&j, "pipes_alive", st->pipes_alive);
	json_u64(&j, "wakeups", st->wakeups);
	json_f64(&j, "events_per_wakeup", relay_div(st->events, st->wakeups));
	json_u64(&j, "epoll_ctl", st->epoll_ctl);
	json_f64(&j, "cpu_user", st->cpu_user);
	json_f64(&j, "cpu_sys", st->cpu_sys);
	json_end(&j);
}

void relay_stats_print(const struct relay_opts *o,
		       const struct relay_stats *st, FILE *f)
{
	if (o->json) {
		relay_stats_json(o, st, f);
		fflush(f);
		return;
	}
	fprintf(f, "relay: %s, %.3f s; connections: accepted %llu, active "
		"%llu (peak %llu), completed %llu, failed %llu, resets %llu, "
		"relay errors %llu, idle-closed %llu, grace-closed %llu, "
		"accept errors %llu\n",
		o->mode == DND_RELAY_SPLICE ? "splice" : "rw", st->seconds,
		(unsigned long long)st->accepted,
		(unsigned long long)st->active,
		(unsigned long long)st->peak_active,
		(unsigned long long)st->completed,
		(unsigned long long)st->failed,
		(unsigned long long)st->resets,
		(unsigned long long)st->errors,
		(unsigned long long)st->idle_closed,
		(unsigned long long)st->grace_closed,
		(unsigned long long)st->accept_errors);
	fprintf(f, "  bytes: client->target %llu, target->client %llu, "
		"discarded at resets %llu; urgent-data copies %llu\n",
		(unsigned long long)st->bytes[0],
		(unsigned long long)st->bytes[1],
		(unsigned long long)st->bytes_discarded,
		(unsigned long long)st->urgent_copies);
	fprintf(f, "  splice: in %llu calls, %.0f B/call; out %llu calls, "
		"%.0f B/call\n", (unsigned long long)st->splice_in_calls,
		relay_bytes_per_splice(st),
		(unsigned long long)st->splice_out_calls,
		relay_div(st->splice_out_bytes, st->splice_out_calls));
	fprintf(f, "  pipes: %llu created (max %llu), %llu failed, peak %llu "
		"in use, %llu open now, %llu B (%llu smaller)\n",
		(unsigned long long)st->pipes_created,
		(unsigned long long)st->pipes_max,
		(unsigned long long)st->pipes_failed,
		(unsigned long long)st->pipes_peak,
		(unsigned long long)st->pipes_alive,
		(unsigned long long)st->pipe_size_min,
		(unsigned long long)st->pipes_small);
	fprintf(f, "  copy: read %llu calls, %.0f B/call; write %llu calls; "
		"fallbacks %llu\n", (unsigned long long)st->read_calls,
		relay_div(st->read_bytes, st->read_calls),
		(unsigned long long)st->write_calls,
		(unsigned long long)st->fallbacks);
	fprintf(f, "  eagain: pipe full %llu, empty source %llu, destination "
		"full %llu\n", (unsigned long long)st->eagain_pipe_full,
		(unsigned long long)st->eagain_empty,
		(unsigned long long)st->eagain_out);
	fprintf(f, "  epoll: %llu wakeups, %.2f events/wakeup, %llu ctl; cpu: "
		"user %.3f s, sys %.3f s\n", (unsigned long long)st->wakeups,
		relay_div(st->events, st->wakeups),
		(unsigned long long)st->epoll_ctl, st->cpu_user, st->cpu_sys);
	fflush(f);
}
