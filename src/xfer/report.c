// SPDX-License-Identifier: MIT
/*
 * Transfer reports. The first line is the figure the user waited for (the
 * 2006 form keeps the 2006 thread's exact line, so old result tables can be
 * compared line by line); everything after it explains the number (CPU,
 * calls, sizes the kernel really gave, TCP state, verdict).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/json.h"
#include "xfer/report.h"
#include "xfer/xfer.h"

static double report_mbps(const struct dnd_result *r)
{
	/* The 2006 program: bytes per microsecond is MB/s (10^6 bytes). */
	return r->cost.wall > 0 ? (double)r->bytes / (r->cost.wall * 1e6) : 0;
}

static void report_calls(FILE *f, const struct dnd_syscalls *sc)
{
	const char *sep = "";
	int k;

	fprintf(f, "  syscalls:");
	for (k = 0; k < DND_SC_COUNT; k++) {
		if (!sc->calls[k])
			continue;
		fprintf(f, "%s %s %llu", sep, stats_sc_name(k),
			(unsigned long long)sc->calls[k]);
		if (k != DND_SC_FDATASYNC && k != DND_SC_FTRUNCATE &&
		    k != DND_SC_FALLOCATE)
			fprintf(f, " x %.0f B",
				(double)sc->bytes[k] / (double)sc->calls[k]);
		sep = ",";
	}
	if (!*sep)
		fprintf(f, " none");
	fprintf(f, "\n");
}

/* What the zero-copy method saw: never claims more than the kernel said. */
static void report_zc(FILE *f, const struct dnd_zc *zc)
{
	fprintf(f, "  zerocopy: %llu B without a copy, %llu B copied",
		(unsigned long long)zc->zc_bytes,
		(unsigned long long)zc->copied_bytes);
	if (zc->completions)
		fprintf(f, "; %llu completions, %llu reported copied",
			(unsigned long long)zc->completions,
			(unsigned long long)zc->copied_completions);
	if (zc->enobufs)
		fprintf(f, "; ENOBUFS %llu (reaped and retried)",
			(unsigned long long)zc->enobufs);
	fprintf(f, "\n");
}

static double report_rate(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / (secs * 1e6) : 0;
}

/* -P: each stream's share. */
static void report_streams(FILE *f, const struct dnd_result *r)
{
	unsigned int i;

	for (i = 0; r->nstreams > 1 && i < r->nstreams; i++)
		fprintf(f, "  stream %u: %llu bytes from offset %llu in %.3f "
			"s, %.3f MB/s, retransmits %u\n", i,
			(unsigned long long)r->st[i].bytes,
			(unsigned long long)r->st[i].offset, r->st[i].seconds,
			report_rate(r->st[i].bytes, r->st[i].seconds),
			r->st[i].retrans);
}

/* dnd serve's side of the transfer, its lines indented under ours. */
/* --mptcp: the subflows and their bytes, or the fallback to TCP. */
static void report_mptcp(FILE *f, const struct dnd_result *r)
{
	unsigned int i, streams = r->nstreams ? r->nstreams : 1;

	if (!r->mptcp.on)
		return;
	if (r->mptcp.fallback)
		fprintf(f, "  mptcp: fell back to plain TCP on %u of %u "
			"stream%s: the peer did not answer in MPTCP (give it "
			"--mptcp; else a middlebox strips the option)\n",
			r->mptcp.fallback, streams, streams > 1 ? "s" : "");
	if (r->mptcp.fallback == streams)
		return;
	fprintf(f, "  mptcp: %u subflow%s\n", r->mptcp.total,
		r->mptcp.total == 1 ? "" : "s");
	for (i = 0; i < r->mptcp.nsub; i++)
		fprintf(f, "    stream %u: %s -> %s, sent %llu B, received "
			"%llu B\n", r->mptcp.sub[i].stream, r->mptcp.sub[i].local,
			r->mptcp.sub[i].remote,
			(unsigned long long)r->mptcp.sub[i].sent,
			(unsigned long long)r->mptcp.sub[i].received);
	if (r->mptcp.nsub < r->mptcp.total)
		fprintf(f, "    (%u more not shown)\n",
			r->mptcp.total - r->mptcp.nsub);
}

static void report_peer_text(FILE *f, const char *text)
{
	const char *p = text, *nl;

	fprintf(f, "  the server's side:\n");
	while (*p) {
		nl = strchrnul(p, '\n');
		while (p < nl && *p == ' ')
			p++;
		if (nl > p)
			fprintf(f, "    %.*s\n", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/* The session's TLS: what ran, what authenticated, whether the kernel
 * moves the records. */
static void report_tls(FILE *f, const struct dnd_result *r)
{
	const char *k = r->tls.ktls_tx && r->tls.ktls_rx ? "yes" :
			r->tls.ktls_tx ? "send only" :
			r->tls.ktls_rx ? "receive only" : "no";

	if (!r->tls.on)
		return;
	fprintf(f, "  tls: %s %s %s, auth %s, kernel TLS: %s", r->tls.version,
		r->tls.cipher, r->tls.group[0] ? r->tls.group : "(no key "
		"exchange)", r->tls.auth, k);
	if (!r->tls.ktls_tx || !r->tls.ktls_rx)
		fprintf(f, " (%s)", r->tls.ktls_why);
	fprintf(f, "\n");
}

/*
 * The line people quote, labelled as iperf3 labels its two ends. The
 * sender's figure runs to the receiver's confirmation (with -P, the last
 * stream's), what the user waited for; the 2006 program's clock, which stops at
 * the last byte handed to the socket, stands beside it. Units as in
 * docs/json.md: sizes in bytes, rates decimal.
 */
/* The headline's seconds: the sender's to the receiver's confirmation. */
static double report_head_secs(const struct dnd_result *r)
{
	return r->sender && r->total_seconds > 0 ? r->total_seconds :
	       r->cost.wall;
}

static void report_headline(FILE *f, const struct dnd_result *r)
{
	double mbps = report_mbps(r);
	double secs = report_head_secs(r);
	double rate = report_rate(r->bytes, secs);

	if (r->dnd2006_line) {
		fprintf(f, "\n%s %llu KiB in %.3f sec: %.3f MB/s (%.3f Gb/s)\n\n",
			r->sender ? "Sent" : "Received",
			(unsigned long long)(r->bytes / 1024), r->cost.wall,
			mbps, mbps * 8 / 1000);
		return;
	}
	fprintf(f, "\n%s: %llu bytes in %.3f s: %.3f MB/s (%.3f Gbit/s)",
		r->sender ? "sender" : "receiver",
		(unsigned long long)r->bytes, secs, rate, rate * 8 / 1000);
	if (!r->sender)
		fprintf(f, ", first byte to the last landed\n\n");
	else if (r->total_seconds > 0)
		fprintf(f, " to the receiver's confirmation; sent (the 2006 "
			"program's timing) in %.3f s: %.3f MB/s\n\n",
			r->cost.wall, mbps);
	else
		fprintf(f, " to the last byte sent; no confirmation came\n\n");
}

/* The window and why: "autotuned (default)", "128 KiB (-w)". */
static const char *report_window(const struct dnd_result *r, char *buf,
				 size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB" };
	const char *from = r->window_from ? r->window_from : "default";
	uint64_t v = r->window;
	unsigned int u = 0;

	if (!strcmp(from, "2006-form"))
		from = "the 2006 form's default";
	if (!v) {
		snprintf(buf, len, "autotuned (%s)", from);
		return buf;
	}
	for (; u < 3 && v % 1024 == 0; u++)
		v /= 1024;
	snprintf(buf, len, "%llu %s (%s)", (unsigned long long)v, unit[u],
		 from);
	return buf;
}

/* How a receiver verified, after "verified" in the text report. */
static const char *report_verify_kind(const struct dnd_result *r)
{
	if (!r->verify_kind)
		return "";
	return !strcmp(r->verify_kind, "as-received") ? " as received" :
	       " by reading back the landed file";
}

void report_text(FILE *f, const struct dnd_result *r)
{
	char a[32], b[32], w[64], ranges[64] = "";

	if (r->timed)
		report_headline(f, r);
	fprintf(f, "  method %s, %s %s, buffer %s (used %s)", r->method,
		r->sender ? "to" : "from", r->peer[0] ? r->peer : "-",
		opt_fmt_size(r->bsz, a, sizeof(a)),
		opt_fmt_size(r->eff_bsz, b, sizeof(b)));
	if (r->uses_pipe && r->pipe_got)
		fprintf(f, ", pipe %u (asked %s)", r->pipe_got,
			r->pipe_size ? opt_fmt_size(r->pipe_size, a, sizeof(a)) :
			"default");
	fprintf(f, "\n");
	if (r->capped[0])
		fprintf(f, "  capped: buffer %s (%s)\n",
			opt_fmt_size(r->bsz, a, sizeof(a)), r->capped);
	if (r->sndbuf || r->rcvbuf)
		fprintf(f, "  window: %s, kernel gave sndbuf %d rcvbuf %d\n",
			report_window(r, w, sizeof(w)), r->sndbuf, r->rcvbuf);
	if (r->rate && r->timed) {
		double got = report_rate(r->bytes, report_head_secs(r));

		fprintf(f, "  rate: %.4g MB/s of %.4g MB/s asked (%.0f%%)\n",
			got, (double)r->rate / 1e6, 100 * got * 1e6 /
			(double)r->rate);
	}
	if (r->timed) {
		const struct dnd_cost *c = &r->cost;

		fprintf(f, "  cpu: user %.3f s, sys %.3f s (%.1f%% of one CPU), "
			"%.1f us/MB; machine busy %.1f%% of %d CPUs, steal "
			"%.1f%%\n", c->user, c->sys,
			c->wall > 0 ? 100 * (c->user + c->sys) / c->wall : 0,
			c->usec_per_mb, c->sys_busy_pct, c->ncpu,
			c->sys_steal_pct);
		fprintf(f, "  context switches: %ld voluntary, %ld involuntary\n",
			c->nvcsw, c->nivcsw);
		report_calls(f, &r->sc);
	}
	if (r->zc.set)
		report_zc(f, &r->zc);
	if (r->have_tcp)
		fprintf(f, "  tcp: rtt %u us (var %u), retransmits %u, mss %u, "
			"congestion %s (%s)\n", r->tcp.tcpi_rtt,
			r->tcp.tcpi_rttvar, r->tcp.tcpi_total_retrans,
			r->sender ? r->tcp.tcpi_snd_mss : r->tcp.tcpi_rcv_mss,
			r->congestion[0] ? r->congestion : "?",
			r->congestion_asked ? "-C" : "the kernel's default");
	report_streams(f, r);
	report_mptcp(f, r);
	if (r->sparse)
		fprintf(f, "  holes: %.1f %s not sent (%u extent%s of data, "
			"%llu bytes)\n", r->holes >= (1ULL << 30) ?
			(double)r->holes / (1ULL << 30) :
			(double)r->holes / (1ULL << 20),
			r->holes >= (1ULL << 30) ? "GiB" : "MiB", r->extents,
			r->extents == 1 ? "" : "s",
			(unsigned long long)(r->bytes - r->holes));
	if (r->resumed_from)
		fprintf(f, "  resumed: %llu bytes kept from an earlier try, "
			"%llu sent now\n", (unsigned long long)r->resumed_from,
			(unsigned long long)r->bytes);
	/* The sender's headline is its total, but for the 2006 program's line. */
	if (r->total_seconds > 0 && (r->dnd2006_line || !r->sender))
		fprintf(f, "  total: %.3f s from the first byte to the %s: "
			"%.3f MB/s\n", r->total_seconds, r->total_end,
			report_rate(r->bytes, r->total_seconds));
	if (r->detail[0])
		fprintf(f, "  note: %s\n", r->detail);
	if (r->sync[0])
		fprintf(f, "  sync: %s\n", r->sync);
	if (r->warning[0])
		fprintf(f, "  warning: %s\n", r->warning);
	report_tls(f, r);
	/* -P N as received: the receiver compared each range's hash; the
	 * file's, shown, is the sender's (what xxhsum -H3 says). */
	if (r->verify_ranges)
		snprintf(ranges, sizeof(ranges), ", each of %u ranges against "
			 "the sender's", r->verify_ranges);
	if (r->error[0])
		fprintf(f, "  verify: FAILED: %s\n", r->error);
	else if (r->hash_valid)
		fprintf(f, "  verify: %s%s%s%s (xxh3 %016llx, %llu bytes; %s)\n",
			r->verdict, report_verify_kind(r), ranges,
			r->tls.on ? " and authenticated" : "",
			(unsigned long long)r->hash,
			(unsigned long long)r->bytes, r->tls.on ? "TLS 1.3" :
			"catches accidents, not attackers: use --key");
	else
		fprintf(f, "  verify: %s (%llu bytes)\n", r->verdict,
			(unsigned long long)r->bytes);
	if (r->peer_text)
		report_peer_text(f, r->peer_text);
	fflush(f);
}

static void report_json_calls(struct json *j, const struct dnd_syscalls *sc)
{
	int k;

	json_obj_begin(j, "syscalls");
	for (k = 0; k < DND_SC_COUNT; k++) {
		if (!sc->calls[k])
			continue;
		json_obj_begin(j, stats_sc_name(k));
		json_u64(j, "calls", sc->calls[k]);
		json_u64(j, "bytes", sc->bytes[k]);
		json_obj_end(j);
	}
	json_obj_end(j);
	json_u64(j, "eagain", sc->eagain);
}

static void report_json_streams(struct json *j, const struct dnd_result *r)
{
	unsigned int i;

	json_u64(j, "streams", r->nstreams ? r->nstreams : 1);
	if (r->nstreams < 2)
		return;
	json_arr_begin(j, "stream");
	for (i = 0; i < r->nstreams; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "index", i);
		json_u64(j, "offset_bytes", r->st[i].offset);
		json_u64(j, "bytes", r->st[i].bytes);
		json_f64(j, "seconds", r->st[i].seconds);
		json_f64(j, "mb_per_s", report_rate(r->st[i].bytes,
						    r->st[i].seconds));
		json_u64(j, "retransmits", r->st[i].retrans);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void report_json_mptcp(struct json *j, const struct dnd_result *r)
{
	unsigned int i;

	if (!r->mptcp.on)
		return;
	json_obj_begin(j, "mptcp");
	json_u64(j, "fallback_streams", r->mptcp.fallback);
	json_u64(j, "subflows_total", r->mptcp.total);
	json_arr_begin(j, "subflows");
	for (i = 0; i < r->mptcp.nsub; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "stream", r->mptcp.sub[i].stream);
		json_str(j, "local", r->mptcp.sub[i].local);
		json_str(j, "remote", r->mptcp.sub[i].remote);
		json_u64(j, "sent_bytes", r->mptcp.sub[i].sent);
		json_u64(j, "received_bytes", r->mptcp.sub[i].received);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void report_json_tls(struct json *j, const struct dnd_result *r)
{
	bool both = r->tls.ktls_tx && r->tls.ktls_rx;

	if (!r->tls.on) {
		json_str(j, "tls", NULL);
		return;
	}
	json_obj_begin(j, "tls");
	json_str(j, "version", r->tls.version);
	json_str(j, "cipher", r->tls.cipher);
	json_str(j, "group", r->tls.group[0] ? r->tls.group : NULL);
	json_str(j, "auth", r->tls.auth);
	json_bool(j, "ktls_tx", r->tls.ktls_tx);
	json_bool(j, "ktls_rx", r->tls.ktls_rx);
	json_str(j, "ktls_why", both ? NULL : r->tls.ktls_why);
	json_obj_end(j);
}

/* An interval's own fields: a JSON Line's, or an "intervals" entry's. */
static void report_interval_fields(struct json *j,
				   const struct xfer_interval *iv)
{
	double secs = iv->end - iv->start;

	json_f64(j, "start_seconds", iv->start);
	json_f64(j, "end_seconds", iv->end);
	json_u64(j, "bytes", iv->bytes);
	json_f64(j, "mb_per_s", report_rate(iv->bytes, secs));
	json_f64(j, "cpu_user_seconds", iv->cpu_user);
	json_f64(j, "cpu_sys_seconds", iv->cpu_sys);
	json_u64(j, "retransmits", iv->retrans);
	json_u64(j, "rtt_us", iv->rtt_us);
	json_bool(j, "last", iv->last);
}

static void report_json_intervals(struct json *j, const struct dnd_result *r)
{
	size_t i;

	if (!r->intervals_on)
		return;
	json_arr_begin(j, "intervals");
	for (i = 0; i < r->niv; i++) {
		json_obj_begin(j, NULL);
		report_interval_fields(j, &r->iv[i]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_u64(j, "intervals_lost", r->iv_lost);
}

void report_json(FILE *f, const struct dnd_result *r)
{
	struct json j;

	json_begin_doc(&j, f, "report");
	json_str(&j, "role", r->sender ? "send" : "recv");
	json_str(&j, "method", r->method);
	json_name(&j, "file", r->file, r->file ? strlen(r->file) : 0);
	json_str(&j, "peer", r->peer[0] ? r->peer : NULL);
	json_bool(&j, "ok", !r->error[0]);
	json_str(&j, "error", r->error[0] ? r->error : NULL);
	json_str(&j, "verdict", r->error[0] ? "failed" : r->verdict);
	if (r->verify_kind)
		json_str(&j, "verify", r->verify_kind);
	if (r->verify_ranges)
		json_u64(&j, "verify_ranges", r->verify_ranges);
	if (r->hash_valid) {
		char h[24];

		snprintf(h, sizeof(h), "%016llx", (unsigned long long)r->hash);
		json_str(&j, "xxh3", h);
	}
	report_json_tls(&j, r);
	json_u64(&j, "bytes", r->bytes);
	if (r->length != UINT64_MAX)
		json_u64(&j, "length_bytes", r->length);
	json_bool(&j, "raw", r->raw);
	json_u64(&j, "buffer_bytes", r->bsz);
	json_u64(&j, "buffer_used_bytes", r->eff_bsz);
	if (r->capped[0]) {
		json_u64(&j, "buffer_asked_bytes", r->asked_bsz);
		json_str(&j, "capped", r->capped);
	}
	if (r->uses_pipe) {
		json_u64(&j, "pipe_asked_bytes", r->pipe_size);
		json_u64(&j, "pipe_bytes", r->pipe_got);
	}
	json_u64(&j, "window_asked_bytes", r->window);
	json_str(&j, "window_from", r->window_from ? r->window_from :
		 "default");
	if (r->rate) {
		json_u64(&j, "rate_asked_bytes_per_s", r->rate);
		json_f64(&j, "rate_achieved_bytes_per_s", r->timed ?
			 report_rate(r->bytes, report_head_secs(r)) * 1e6 :
			 NAN);
	} else {
		json_str(&j, "rate_asked_bytes_per_s", NULL);
		json_str(&j, "rate_achieved_bytes_per_s", NULL);
	}
	json_str(&j, "congestion", r->congestion[0] ? r->congestion : NULL);
	json_str(&j, "congestion_from", r->congestion_asked ? "-C" :
		 "default");
	json_i64(&j, "sndbuf_bytes", r->sndbuf);
	json_i64(&j, "rcvbuf_bytes", r->rcvbuf);
	if (r->timed) {
		const struct dnd_cost *c = &r->cost;

		json_f64(&j, "seconds", c->wall);
		json_f64(&j, "mb_per_s", report_mbps(r));
		json_f64(&j, "gbit_per_s", report_mbps(r) * 8 / 1000);
		json_f64(&j, "cpu_user_seconds", c->user);
		json_f64(&j, "cpu_sys_seconds", c->sys);
		json_f64(&j, "cpu_us_per_mb", c->usec_per_mb);
		json_f64(&j, "machine_busy_pct", c->sys_busy_pct);
		json_f64(&j, "machine_steal_pct", c->sys_steal_pct);
		json_i64(&j, "ncpu", c->ncpu);
		json_i64(&j, "ctx_voluntary", c->nvcsw);
		json_i64(&j, "ctx_involuntary", c->nivcsw);
		report_json_calls(&j, &r->sc);
	}
	if (r->zc.set) {
		json_obj_begin(&j, "zerocopy");
		json_u64(&j, "zc_bytes", r->zc.zc_bytes);
		json_u64(&j, "copied_bytes", r->zc.copied_bytes);
		json_u64(&j, "completions", r->zc.completions);
		json_u64(&j, "copied_completions", r->zc.copied_completions);
		json_u64(&j, "enobufs", r->zc.enobufs);
		json_obj_end(&j);
	}
	if (r->have_tcp) {
		json_obj_begin(&j, "tcp");
		json_u64(&j, "rtt_us", r->tcp.tcpi_rtt);
		json_u64(&j, "rttvar_us", r->tcp.tcpi_rttvar);
		json_u64(&j, "retransmits", r->tcp.tcpi_total_retrans);
		json_u64(&j, "snd_mss_bytes", r->tcp.tcpi_snd_mss);
		json_u64(&j, "rcv_mss_bytes", r->tcp.tcpi_rcv_mss);
		json_obj_end(&j);
	}
	json_u64(&j, "resumed_from", r->resumed_from);
	json_u64(&j, "holes_bytes", r->holes);
	json_u64(&j, "data_extents", r->extents);
	if (r->total_seconds > 0)
		json_f64(&j, "total_seconds", r->total_seconds);
	report_json_streams(&j, r);
	report_json_mptcp(&j, r);
	json_str(&j, "note", r->detail[0] ? r->detail : NULL);
	json_str(&j, "sync", r->sync[0] ? r->sync : NULL);
	json_str(&j, "warning", r->warning[0] ? r->warning : NULL);
	report_json_intervals(&j, r);
	if (r->peer_json)
		json_raw(&j, "peer_report", r->peer_json);
	json_end(&j);
}

void report_interval_text(const struct xfer_interval *iv, void *arg)
{
	FILE *f = arg;
	double secs = iv->end - iv->start;

	fprintf(f, "  [%7.2f-%7.2f s] %12llu B %10.3f MB/s  cpu %5.1f%%  "
		"retr %u  rtt %u us\n", iv->start, iv->end,
		(unsigned long long)iv->bytes, report_rate(iv->bytes, secs),
		secs > 0 ? 100 * (iv->cpu_user + iv->cpu_sys) / secs : 0,
		iv->retrans, iv->rtt_us);
	fflush(f);
}

void report_interval_json(const struct xfer_interval *iv, void *arg)
{
	struct json j;

	json_begin_doc(&j, arg, "interval");
	report_interval_fields(&j, iv);
	json_end(&j);
}

void report_interval_keep(const struct xfer_interval *iv, void *arg)
{
	struct dnd_result *r = arg;

	if (r->niv == r->iv_cap) {
		size_t cap = r->iv_cap ? 2 * r->iv_cap : 64;
		struct xfer_interval *n = realloc(r->iv, cap * sizeof(*n));

		if (!n) {
			r->iv_lost++;
			return;
		}
		r->iv = n;
		r->iv_cap = cap;
	}
	r->iv[r->niv++] = *iv;
}

void report_free(struct dnd_result *r)
{
	free(r->iv);
	free(r->peer_json);
	free(r->peer_text);
	r->iv = NULL;
	r->peer_json = r->peer_text = NULL;
	r->niv = r->iv_cap = 0;
}
