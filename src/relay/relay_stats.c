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

void relay_stats_add(struct relay_stats *d, const struct relay_stats *s)
{
	d->accepted += s->accepted;
	d->failed += s->failed;
	d->completed += s->completed;
	d->resets += s->resets;
	d->errors += s->errors;
	d->idle_closed += s->idle_closed;
	d->grace_closed += s->grace_closed;
	d->accept_errors += s->accept_errors;
	d->listener_pauses += s->listener_pauses;
	d->bytes[0] += s->bytes[0];
	d->bytes[1] += s->bytes[1];
	d->bytes_discarded += s->bytes_discarded;
	d->urgent_copies += s->urgent_copies;
	d->splice_in_calls += s->splice_in_calls;
	d->splice_in_bytes += s->splice_in_bytes;
	d->splice_out_calls += s->splice_out_calls;
	d->splice_out_bytes += s->splice_out_bytes;
	d->read_calls += s->read_calls;
	d->read_bytes += s->read_bytes;
	d->write_calls += s->write_calls;
	d->write_bytes += s->write_bytes;
	d->eagain_pipe_full += s->eagain_pipe_full;
	d->eagain_empty += s->eagain_empty;
	d->eagain_out += s->eagain_out;
	d->fallbacks += s->fallbacks;
	d->pipes_created += s->pipes_created;
	d->pipes_peak += s->pipes_peak;
	if (s->pipe_size_min && (!d->pipe_size_min ||
				 s->pipe_size_min < d->pipe_size_min))
		d->pipe_size_min = s->pipe_size_min;
	d->pipes_small += s->pipes_small;
	d->pipes_failed += s->pipes_failed;
	d->pipes_max += s->pipes_max;
	d->pipes_alive += s->pipes_alive;
	d->wakeups += s->wakeups;
	d->events += s->events;
	d->epoll_ctl += s->epoll_ctl;
}

static double relay_div(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

static void relay_stats_json(const struct relay_opts *o,
			     const struct relay_stats *st, FILE *f)
{
	struct json j;
	uint64_t i;

	json_begin_doc(&j, f, "relay_stats");
	json_str(&j, "mode", relay_mode_name((enum relay_mode)st->mode));
	json_u64(&j, "threads", st->threads);
	json_f64(&j, "seconds", st->seconds);
	json_u64(&j, "accepted", st->accepted);
	if (st->threads > 1) {
		json_arr_begin(&j, "accepted_per_thread");
		for (i = 0; i < st->threads && i < DND_RELAY_MAX_THREADS; i++)
			json_u64(&j, NULL, st->accepted_by[i]);
		json_arr_end(&j);
	}
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
	json_u64(&j, "client_to_target_bytes", st->bytes[0]);
	json_u64(&j, "target_to_client_bytes", st->bytes[1]);
	json_u64(&j, "discarded_bytes", st->bytes_discarded);
	json_u64(&j, "urgent_copies", st->urgent_copies);
	json_u64(&j, "splice_in_calls", st->splice_in_calls);
	json_u64(&j, "splice_in_bytes", st->splice_in_bytes);
	json_f64(&j, "splice_in_bytes_per_call", relay_bytes_per_splice(st));
	json_u64(&j, "splice_out_calls", st->splice_out_calls);
	json_u64(&j, "splice_out_bytes", st->splice_out_bytes);
	json_f64(&j, "splice_out_bytes_per_call",
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
	json_u64(&j, "pipe_min_bytes", st->pipe_size_min);
	json_u64(&j, "pipes_small", st->pipes_small);
	json_u64(&j, "pipes_failed", st->pipes_failed);
	json_u64(&j, "pipes_max", st->pipes_max);
	json_u64(&j, "pipes_alive", st->pipes_alive);
	json_u64(&j, "wakeups", st->wakeups);
	json_f64(&j, "events_per_wakeup", relay_div(st->events, st->wakeups));
	json_u64(&j, "epoll_ctl_calls", st->epoll_ctl);
	json_f64(&j, "cpu_user_seconds", st->cpu_user);
	json_f64(&j, "cpu_sys_seconds", st->cpu_sys);
	json_end(&j);
}

void relay_stats_print(const struct relay_opts *o,
		       const struct relay_stats *st, FILE *f)
{
	uint64_t i;

	if (o->json) {
		relay_stats_json(o, st, f);
		fflush(f);
		return;
	}
	fprintf(f, "relay: %s, %llu thread%s, %.3f s; connections: accepted "
		"%llu, active %llu (peak %llu), completed %llu, failed %llu, "
		"resets %llu, relay errors %llu, idle-closed %llu, "
		"grace-closed %llu, accept errors %llu\n",
		relay_mode_name((enum relay_mode)st->mode),
		(unsigned long long)st->threads, st->threads == 1 ? "" : "s",
		st->seconds, (unsigned long long)st->accepted,
		(unsigned long long)st->active,
		(unsigned long long)st->peak_active,
		(unsigned long long)st->completed,
		(unsigned long long)st->failed,
		(unsigned long long)st->resets,
		(unsigned long long)st->errors,
		(unsigned long long)st->idle_closed,
		(unsigned long long)st->grace_closed,
		(unsigned long long)st->accept_errors);
	if (st->threads > 1) {
		fprintf(f, "  threads: accepted");
		for (i = 0; i < st->threads && i < DND_RELAY_MAX_THREADS; i++)
			fprintf(f, "%s %llu", i ? "," : "",
				(unsigned long long)st->accepted_by[i]);
		fprintf(f, "\n");
	}
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
