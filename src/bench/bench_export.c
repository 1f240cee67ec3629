// SPDX-License-Identifier: MIT
/*
 * Machine-readable bench output: JSON Lines (one object per cell and per
 * reference, each with json_begin_doc()'s fields and the machine) and CSV
 * with a fixed set of columns, quoted by core/csv.
 */
#include <stdio.h>

#include "bench/bench_export.h"
#include "bench/bench_out.h"
#include "bench/bench_ref.h"
#include "core/csv.h"
#include "core/json.h"
#include "xfer/method.h"

static const char *const state_names[] = {
	[BENCH_TODO] = "not run",
	[BENCH_OK] = "ok",
	[BENCH_FAILED] = "failed",
	[BENCH_NA] = "n/a",
	[BENCH_SAME] = "same",
	[BENCH_OFF] = "not in set",
};

/* The references a cell is compared with, as ratio keys (docs/json.md). */
static const char *const ratio_keys[] = { "memcpy", "pipe", "iperf3",
					  "iperf3-l1M", "copy", "device" };
#define NRATIO	(sizeof(ratio_keys) / sizeof(ratio_keys[0]))

/*
 * Starts a cell's or a reference's object: the fields every dnd object has
 * (type "bench_<kind>"), kind as before, and the machine and run settings.
 */
static void json_common(struct json *j, FILE *f, const struct bench *b,
			const char *kind)
{
	char type[32];

	snprintf(type, sizeof(type), "bench_%s", kind);
	json_begin_doc(j, f, type);
	json_str(j, "kind", kind);
	json_obj_begin(j, "machine");
	json_str(j, "kernel", b->facts.kernel);
	json_i64(j, "ncpu", b->facts.ncpu);
	json_str(j, "cpu_model", b->facts.cpu_model);
	json_obj_end(j);
	json_str(j, "path", b->facts.path);
	json_bool(j, "netns", b->ns_send[0] || b->o.netns);
	if (b->o.remote) {
		json_str(j, "remote", b->host);
		json_bool(j, "reverse", b->o.reverse);
	}
	if (b->o.netns) {
		json_u64(j, "mtu_bytes", b->o.mtu);
		json_str(j, "rate", b->o.rate);
		json_str(j, "netem", b->o.netem);
	}
	json_u64(j, "repeat", b->o.repeat);
	json_u64(j, "window_bytes", b->o.window);
	json_str(j, "cache", b->o.cold && !b->cold_failed ? "cold" : "warm");
	json_str(j, "cache_note", b->cache_note[0] ? b->cache_note : NULL);
	json_bool(j, "pinned", b->o.pin);
}

static void json_side(struct json *j, const char *key, double user,
		      double sys, double usmb, double callsmb)
{
	json_obj_begin(j, key);
	json_f64(j, "cpu_user_seconds", user);
	json_f64(j, "cpu_sys_seconds", sys);
	json_f64(j, "cpu_us_per_mb", usmb);
	json_f64(j, "syscalls_per_mb", callsmb);
	json_obj_end(j);
}

/* A rate's median and spread in MB/s under key. */
static void json_spread(struct json *j, const char *key, double median,
			double lo, double hi)
{
	json_obj_begin(j, key);
	json_f64(j, "median", median);
	json_f64(j, "min", lo);
	json_f64(j, "max", hi);
	json_obj_end(j);
}

/* Throughput: median and spread in MB/s, and the median in Gbit/s. */
static void json_mbps(struct json *j, double median, double lo, double hi)
{
	json_spread(j, "mb_per_s", median, lo, hi);
	json_f64(j, "gbit_per_s", median * 8 / 1000);
}

/* --remote: which side the server ran, and its figures (from the
 * peer_report of each run), again under one name. */
static void json_far(struct json *j, const struct bench *b,
		     const struct bench_sum *s)
{
	bool rev = b->o.reverse;

	json_obj_begin(j, "far");
	json_str(j, "host", b->host);
	json_u64(j, "port", b->o.rport);
	json_str(j, "side", rev ? "sender" : "receiver");
	json_f64(j, "cpu_user_seconds", rev ? s->s_user : s->r_user);
	json_f64(j, "cpu_sys_seconds", rev ? s->s_sys : s->r_sys);
	json_f64(j, "cpu_us_per_mb", rev ? s->s_usmb : s->r_usmb);
	json_f64(j, "syscalls_per_mb", rev ? s->s_callsmb : s->r_callsmb);
	json_obj_end(j);
}

static void json_cell(FILE *f, const struct bench *b,
		      const struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	const struct bench_sum *s = &c->sum;
	struct json j;
	unsigned int i;

	json_common(&j, f, b, "cell");
	json_str(&j, "table", g->label[0] ? g->label : "main");
	json_str(&j, "src", bench_src_name(g->src));
	json_str(&j, "sink", bench_sink_name(g->sink));
	json_str(&j, "send", c->snd->name);
	json_str(&j, "recv", c->rcv->name);
	json_u64(&j, "buffer_bytes", c->sbsz);
	json_u64(&j, "recv_buffer_bytes", c->rbsz);
	json_u64(&j, "pipe_asked_bytes", g->pipe);
	json_u64(&j, "streams", g->streams);
	json_u64(&j, "size_bytes", g->size);
	json_str(&j, "status", state_names[c->state]);
	json_str(&j, "reason", c->why[0] ? c->why : NULL);
	json_u64(&j, "runs", c->nruns);
	if (c->state == BENCH_OK) {
		json_str(&j, "verdict", c->runs[0].rcv.verdict);
		json_mbps(&j, s->mbps, s->mbps_min, s->mbps_max);
		if (bench_has_total(b, c))
			json_spread(&j, "total_mb_per_s", s->total,
				    s->total_min, s->total_max);
		json_side(&j, "sender", s->s_user, s->s_sys, s->s_usmb,
			  s->s_callsmb);
		json_side(&j, "receiver", s->r_user, s->r_sys, s->r_usmb,
			  s->r_callsmb);
		if (b->o.remote)
			json_far(&j, b, s);
		json_f64(&j, "machine_busy_pct", s->busy);
		json_f64(&j, "machine_busy_run_pct", s->busy_run);
		json_f64(&j, "machine_steal_pct", s->steal);
		json_f64(&j, "machine_steal_run_pct", s->steal_run);
		json_f64(&j, "retransmits", s->retrans);
		json_arr_begin(&j, "per_run_mb_per_s");
		for (i = 0; i < c->nruns; i++)
			json_f64(&j, NULL, c->runs[i].rcv.mbps);
		json_arr_end(&j);
		json_obj_begin(&j, "ratio");
		for (i = 0; i < NRATIO; i++)
			if (bench_ratio(b, c, ratio_keys[i]) > 0)
				json_f64(&j, ratio_keys[i],
					 bench_ratio(b, c, ratio_keys[i]));
		json_obj_end(&j);
		json_bool(&j, "best_in_row", c->best);
	}
	json_end(&j);
}

static void json_ref(FILE *f, const struct bench *b, const struct bench_ref *r)
{
	struct json j;

	json_common(&j, f, b, "reference");
	json_str(&j, "key", r->key);
	json_str(&j, "name", r->name);
	json_bool(&j, "ok", r->ok);
	json_str(&j, "reason", r->why[0] ? r->why : NULL);
	json_u64(&j, "runs", r->n);
	if (r->ok) {
		json_mbps(&j, r->mbps, r->mbps_min, r->mbps_max);
		if (r->usec_per_mb >= 0)
			json_f64(&j, "cpu_us_per_mb", r->usec_per_mb);
		json_f64(&j, "machine_steal_pct", r->steal_pct);
		json_f64(&j, "machine_steal_max_pct", r->steal_max_pct);
	}
	json_end(&j);
}

void bench_write_json(FILE *f, const struct bench *b)
{
	unsigned int i;

	for (i = 0; i < b->ncells; i++)
		json_cell(f, b, &b->cells[i]);
	for (i = 0; i < b->nrefs; i++)
		json_ref(f, b, &b->refs[i]);
}

#define CSV_HEADER \
	"kind,table,src,sink,send,recv,buffer_bytes,recv_buffer_bytes," \
	"pipe_asked_bytes,streams,window_bytes,size_bytes,status,reason," \
	"verdict,runs," \
	"mb_per_s,mb_per_s_min,mb_per_s_max,gbit_per_s," \
	"total_mb_per_s,total_mb_per_s_min,total_mb_per_s_max," \
	"send_cpu_user_seconds,send_cpu_sys_seconds,recv_cpu_user_seconds," \
	"recv_cpu_sys_seconds,send_cpu_us_per_mb,recv_cpu_us_per_mb," \
	"cpu_us_per_mb,send_syscalls_per_mb,recv_syscalls_per_mb," \
	"machine_busy_pct,machine_busy_run_pct,machine_steal_pct," \
	"machine_steal_run_pct," \
	"retransmits,ratio_memcpy," \
	"ratio_pipe,ratio_iperf3,ratio_iperf3_l1m,ratio_copy,ratio_device," \
	"best_in_row,key,name\n"

static void csv_cell(FILE *f, const struct bench *b, const struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	const struct bench_sum *s = &c->sum;
	bool ok = c->state == BENCH_OK;
	struct csv_row r;
	unsigned int k;

	csv_row_begin(&r, f);
	csv_str(&r, "cell");
	csv_str(&r, g->label[0] ? g->label : "main");
	csv_str(&r, bench_src_name(g->src));
	csv_str(&r, bench_sink_name(g->sink));
	csv_str(&r, c->snd->name);
	csv_str(&r, c->rcv->name);
	csv_u64(&r, c->sbsz);
	csv_u64(&r, c->rbsz);
	csv_u64(&r, g->pipe);
	csv_u64(&r, g->streams);
	csv_u64(&r, b->o.window);
	csv_u64(&r, g->size);
	csv_str(&r, state_names[c->state]);
	csv_str(&r, c->why);
	csv_str(&r, ok ? c->runs[0].rcv.verdict : NULL);
	csv_u64(&r, c->nruns);
	csv_f64(&r, ok, s->mbps);
	csv_f64(&r, ok, s->mbps_min);
	csv_f64(&r, ok, s->mbps_max);
	csv_f64(&r, ok, s->mbps * 8 / 1000);
	csv_f64(&r, bench_has_total(b, c), s->total);
	csv_f64(&r, bench_has_total(b, c), s->total_min);
	csv_f64(&r, bench_has_total(b, c), s->total_max);
	csv_f64(&r, ok, s->s_user);
	csv_f64(&r, ok, s->s_sys);
	csv_f64(&r, ok, s->r_user);
	csv_f64(&r, ok, s->r_sys);
	csv_f64(&r, ok, s->s_usmb);
	csv_f64(&r, ok, s->r_usmb);
	csv_f64(&r, ok, s->s_usmb + s->r_usmb);
	csv_f64(&r, ok, s->s_callsmb);
	csv_f64(&r, ok, s->r_callsmb);
	csv_f64(&r, ok, s->busy);
	csv_f64(&r, ok, s->busy_run);
	csv_f64(&r, ok, s->steal);
	csv_f64(&r, ok, s->steal_run);
	csv_f64(&r, ok, s->retrans);
	for (k = 0; k < NRATIO; k++)
		csv_f64(&r, ok && bench_ratio(b, c, ratio_keys[k]) > 0,
			bench_ratio(b, c, ratio_keys[k]));
	csv_f64(&r, ok, c->best);
	csv_empty(&r, 2);	/* key, name: a reference's */
	csv_row_end(&r);
}

static void csv_ref(FILE *f, const struct bench *b, const struct bench_ref *x)
{
	struct csv_row r;

	csv_row_begin(&r, f);
	/* The JSON's fields in the columns of their names: the key and the
	 * name at the end. */
	csv_str(&r, "reference");
	csv_empty(&r, 9); /* table .. streams */
	csv_u64(&r, b->o.window);
	csv_empty(&r, 1);
	csv_str(&r, x->ok ? "ok" : "not measured");
	csv_str(&r, x->why[0] ? x->why : NULL);
	csv_empty(&r, 1);
	csv_u64(&r, x->n);
	csv_f64(&r, x->ok, x->mbps);
	csv_f64(&r, x->ok, x->mbps_min);
	csv_f64(&r, x->ok, x->mbps_max);
	csv_f64(&r, x->ok, x->mbps * 8 / 1000);
	csv_empty(&r, 3);	/* total_mb_per_s: a transfer's */
	/* send/recv user/sys, per-side us/MB: not split for references. */
	csv_empty(&r, 6);
	csv_f64(&r, x->ok && x->usec_per_mb >= 0, x->usec_per_mb);
	csv_empty(&r, 4);	/* syscalls, machine busy */
	csv_f64(&r, x->ok, x->steal_pct);
	csv_empty(&r, 3 + NRATIO);	/* steal_run .. best_in_row */
	csv_str(&r, x->key);
	csv_str(&r, x->name);
	csv_row_end(&r);
}

void bench_write_csv(FILE *f, const struct bench *b)
{
	unsigned int i;

	fputs(CSV_HEADER, f);
	for (i = 0; i < b->ncells; i++)
		csv_cell(f, b, &b->cells[i]);
	for (i = 0; i < b->nrefs; i++)
		csv_ref(f, b, &b->refs[i]);
	fflush(f);
}
