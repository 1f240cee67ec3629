// SPDX-License-Identifier: MIT
/*
 * `dnd bench relay`: the same flows sent directly, through the splice relay
 * and through the copy relay, in one run. The relay is a child process, so
 * its CPU (its getrusage; /proc/PID/stat for another relay) is its own.
 */
#include <netinet/in.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_proc.h"
#include "cli/opts.h"
#include "core/json.h"
#include "core/kernel.h"
#include "core/log.h"
#include "core/net.h"
#include "core/stats.h"
#include "relay/bench_relay.h"
#include "relay/relay_peer.h"

#define DND_BR_GIB 1073741824.0

static const char *const br_names[DND_BR_NMODES] = {
	[DND_BR_DIRECT] = "direct",
	[DND_BR_SPLICE] = "splice",
	[DND_BR_RW] = "rw",
	[DND_BR_SOCKMAP] = "sockmap",
	[DND_BR_VIA] = "via",
};

/* A mode that runs a `dnd relay` of ours as a child. */
static bool br_is_dnd(enum br_mode m)
{
	return m == DND_BR_SPLICE || m == DND_BR_RW || m == DND_BR_SOCKMAP;
}

/* One run: what the generator saw and what the relay spent. */
struct br_run {
	enum br_mode mode;
	unsigned int flows;
	bool ok;
	char error[200];
	uint64_t bytes;		/* payload both ways, as verified */
	double seconds, gbps;
	bool has_cpu, has_stats;
	double relay_user, relay_sys;
	struct relay_stats rs;
	struct peer_result cl, sk;
	struct dnd_cost mach;	/* the machine (/proc/stat) while the client ran */
};

/* utime and stime of pid in seconds; -errno when it cannot be read. */
static int br_proc_cpu(long pid, double *user, double *sys)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	n = kernel_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* The command name may hold spaces and parentheses: skip past it. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu", &ut, &st) != 2)
		return -EPROTO;
	*user = (double)ut / (double)sysconf(_SC_CLK_TCK);
	*sys = (double)st / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

/* What a child of one run needs: the sink (relay NULL) or our relay. */
struct br_child {
	const struct bench_relay_opts *b;
	const struct relay_opts *relay;
	int lfd;
	unsigned int flows;
};

/* In the child: runs the sink or the relay on lfd and writes its result
 * struct to stdout, which bench_proc collects. */
static int br_child_main(void *arg)
{
	const struct br_child *a = arg;
	struct relay_stats st;
	struct peer_result res;
	struct peer_opts po = {
		.listen_fd = a->lfd, .count = a->flows, .stall = a->b->stall,
		.quiet = true, .no_verify = a->b->no_verify,
	};

	if (a->relay) {
		relay_run(a->relay, &st);
		return write(1, &st, sizeof(st)) == sizeof(st) ? 0 : 1;
	}
	peer_server_run(&po, &res);
	return write(1, &res, sizeof(res)) == sizeof(res) ? 0 : 1;
}

/* Starts a child on lfd (closed here either way); 0 or -errno. */
static int br_spawn(struct bench_child *c, const struct bench_relay_opts *b,
		    int lfd, const struct relay_opts *relay,
		    unsigned int flows)
{
	struct br_child a = { .b = b, .relay = relay, .lfd = lfd,
			      .flows = flows };
	int r = bench_spawn_fn(c, br_child_main, &a);

	close(lfd);
	return r;
}

static int br_listen_any(uint16_t port, uint16_t *got)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char err[256];
	int fd = net_listen_nb("127.0.0.1", port ? port : 0, SOMAXCONN, err,
			       sizeof(err));

	if (fd < 0) {
		log_err("bench relay: %s", err);
		return fd;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1) {
		close(fd);
		return -errno;
	}
	*got = ntohs(ss.ss_family == AF_INET6 ?
		     ((struct sockaddr_in6 *)&ss)->sin6_port :
		     ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/*
 * Starts what a run needs behind the client: the sink and, on a relay path,
 * our relay. Fills po with where the client goes. Returns 0 or -errno.
 */
static int br_start(const struct bench_relay_opts *b, struct br_run *run,
		    struct peer_opts *po, struct bench_child *sink,
		    struct bench_child *relay)
{
	struct relay_opts ro = b->relay;
	uint16_t sport, rport;
	int fd, r;

	fd = br_listen_any(b->sink_port, &sport);
	if (fd < 0)
		return fd;
	r = br_spawn(sink, b, fd, NULL, run->flows);
	if (r)
		return r;
	po->host = run->mode == DND_BR_VIA ? b->via_host : "127.0.0.1";
	po->port = run->mode == DND_BR_VIA ? b->via_port : sport;
	if (!br_is_dnd(run->mode))
		return 0;
	fd = br_listen_any(0, &rport);
	if (fd < 0)
		return fd;
	ro.listen_fd = fd;
	ro.target_host = "127.0.0.1";
	ro.target_port = sport;
	ro.out = stderr;	/* its stdout carries the report */
	ro.mode = run->mode == DND_BR_SPLICE ? DND_RELAY_SPLICE :
		  run->mode == DND_BR_RW ? DND_RELAY_RW : DND_RELAY_SOCKMAP;
	if (ro.mode != DND_RELAY_SPLICE)
		ro.pipe_size = 0;	/* unused by the copy path */
	ro.max_conn = run->flows + 16;
	ro.quiet = true;
	if (!ro.max_pipes)
		ro.max_pipes = 2 * ro.max_conn;
	po->port = rport;
	return br_spawn(relay, b, fd, &ro, run->flows);
}

/*
 * Waits at most secs (after a SIGTERM when term) for a child's report of
 * len bytes into buf. False, with why, when it was not started or gave none.
 */
static bool br_collect(struct bench_child *c, bool term, double secs,
		       void *buf, size_t len, char *why, size_t wlen)
{
	bool ok;

	why[0] = '\0';
	if (!c->started)
		return false;
	if (term)
		kill(c->pid, SIGTERM);
	bench_wait(c, 1, stats_now() + secs, secs);
	ok = bench_child_ok(c) && c->out_len == len;
	if (ok)
		memcpy(buf, c->out, len);
	else
		bench_child_why(c, why, wlen);
	bench_child_free(c);
	return ok;
}

/* The run's time, rate, verdict and first error, once all ends are done. */
static void br_verdict(struct br_run *run, int e, int rc, const char *sink,
		       const char *relay)
{
	run->bytes = run->sk.received + run->cl.received;
	/*
	 * The client is done when its last FIN comes back, which can be before
	 * the sink has read what is still in the socket buffers and pipes on
	 * the way: the run ends when both ends are done (one monotonic clock).
	 */
	run->seconds = (run->sk.t_end > run->cl.t_end ? run->sk.t_end :
			run->cl.t_end) - run->cl.t_start;
	if (run->cl.t_start <= 0 || run->seconds < 0)
		run->seconds = 0;
	if (run->seconds > 0)
		run->gbps = (double)run->bytes * 8 / run->seconds / 1e9;
	run->ok = !e && rc == 0 && !sink[0] && !relay[0] && !run->sk.failed &&
		  run->sk.ok == run->flows;
	if (e)
		snprintf(run->error, sizeof(run->error), "cannot start: %s",
			 strerror(-e));
	else if (rc < 0 && rc != -EIO)
		snprintf(run->error, sizeof(run->error), "the client could "
			 "not start: %s", strerror(-rc));
	else if (run->cl.error[0])
		snprintf(run->error, sizeof(run->error), "%s", run->cl.error);
	else if (run->sk.error[0])
		snprintf(run->error, sizeof(run->error), "%s", run->sk.error);
	else if (sink[0] || relay[0])
		snprintf(run->error, sizeof(run->error), "the %s: %.150s",
			 sink[0] ? "sink" : "relay", sink[0] ? sink : relay);
	else if (!run->ok)
		snprintf(run->error, sizeof(run->error), "the sink verified "
			 "%u of %u flows", run->sk.ok, run->flows);
}

static void br_run_one(const struct bench_relay_opts *b, struct br_run *run)
{
	struct bench_child sink = { .fd_out = -1, .fd_err = -1 };
	struct bench_child relay = { .fd_out = -1, .fd_err = -1 };
	struct peer_opts po = {
		.flows = run->flows, .bytes = b->bytes, .reply = b->reply,
		.stall = b->stall, .quiet = true, .no_verify = b->no_verify,
	};
	long cpid = run->mode == DND_BR_VIA ? b->via_pid : -1;
	double u0 = 0, s0 = 0, u1 = 0, s1 = 0;
	struct dnd_sample m0, m1;
	char swhy[300], rwhy[300];
	int e, rc = -1;

	e = br_start(b, run, &po, &sink, &relay);
	run->has_cpu = cpid > 0 && !br_proc_cpu(cpid, &u0, &s0);
	stats_sample(&m0);
	if (!e)
		rc = peer_client_run(&po, &run->cl);
	stats_sample(&m1);
	stats_cost(&m0, &m1, 0, &run->mach);
	if (run->has_cpu)
		run->has_cpu = !br_proc_cpu(cpid, &u1, &s1);
	run->relay_user = u1 - u0;
	run->relay_sys = s1 - s0;
	/* After SIGTERM our relay gives open flows --grace seconds. */
	run->has_stats = br_collect(&relay, true, b->relay.grace + 5,
				    &run->rs, sizeof(run->rs), rwhy,
				    sizeof(rwhy));
	/* Our own relay counts its CPU in microseconds, not 10 ms ticks. */
	if (run->has_stats) {
		run->relay_user = run->rs.cpu_user;
		run->relay_sys = run->rs.cpu_sys;
		run->has_cpu = true;
	}
	/* The sink stops by itself once every flow is in, or stalled. */
	br_collect(&sink, rc != 0, b->stall + 5, &run->sk, sizeof(run->sk),
		   swhy, sizeof(swhy));
	br_verdict(run, e, rc, swhy, rwhy);
}

static double br_cpu_per_gib(const struct br_run *r)
{
	return r->has_cpu && r->bytes ? (r->relay_user + r->relay_sys) /
					((double)r->bytes / DND_BR_GIB) : -1;
}

static const char *br_name(const struct bench_relay_opts *b, enum br_mode m)
{
	return m == DND_BR_VIA ? b->via_name : br_names[m];
}

static void br_json(const struct bench_relay_opts *b, const struct br_run *r,
		    unsigned int rep)
{
	struct json j;

	json_begin_doc(&j, stdout, "bench_relay_run");
	json_str(&j, "path", br_name(b, r->mode));
	json_u64(&j, "flows", r->flows);
	if (br_is_dnd(r->mode))
		json_u64(&j, "relay_threads", b->relay.threads);
	json_u64(&j, "run", rep);
	json_bool(&j, "ok", r->ok);
	json_str(&j, "verdict", !r->ok ? "failed" : b->no_verify ? "counted" :
		 "verified");
	json_str(&j, "error", r->error[0] ? r->error : NULL);
	json_u64(&j, "bytes", r->bytes);
	json_f64(&j, "seconds", r->seconds);
	json_f64(&j, "gbit_per_s", r->gbps);
	json_f64(&j, "mb_per_s", r->seconds > 0 ? (double)r->bytes / 1e6 /
			r->seconds : 0);
	if (r->has_cpu) {
		json_str(&j, "relay_cpu_from", r->has_stats ? "getrusage" :
			 "/proc/PID/stat");
		json_f64(&j, "relay_cpu_user_seconds", r->relay_user);
		json_f64(&j, "relay_cpu_sys_seconds", r->relay_sys);
		json_f64(&j, "relay_cpu_seconds_per_gib", br_cpu_per_gib(r));
		json_f64(&j, "relay_cpu_pct", r->seconds > 0 ? 100 *
				(r->relay_user + r->relay_sys) / r->seconds : 0);
	}
	json_f64(&j, "client_cpu_seconds", r->cl.cpu_user + r->cl.cpu_sys);
	json_f64(&j, "sink_cpu_seconds", r->sk.cpu_user + r->sk.cpu_sys);
	json_f64(&j, "machine_busy_pct", r->mach.sys_busy_pct);
	json_f64(&j, "machine_softirq_pct", r->mach.sys_softirq_pct);
	json_f64(&j, "machine_steal_pct", r->mach.sys_steal_pct);
	if (r->has_stats) {
		json_u64(&j, "splice_in_calls", r->rs.splice_in_calls);
		json_f64(&j, "splice_in_bytes_per_call",
			 relay_bytes_per_splice(&r->rs));
		json_u64(&j, "splice_out_calls", r->rs.splice_out_calls);
		json_u64(&j, "read_calls", r->rs.read_calls);
		json_u64(&j, "write_calls", r->rs.write_calls);
		json_u64(&j, "eagain_pipe_full", r->rs.eagain_pipe_full);
		json_u64(&j, "eagain_empty", r->rs.eagain_empty);
		json_u64(&j, "eagain_out", r->rs.eagain_out);
		json_u64(&j, "fallbacks", r->rs.fallbacks);
		json_u64(&j, "pipes_peak", r->rs.pipes_peak);
		json_u64(&j, "pipe_min_bytes", r->rs.pipe_size_min);
		json_u64(&j, "wakeups", r->rs.wakeups);
		json_f64(&j, "events_per_wakeup", r->rs.wakeups ?
				(double)r->rs.events / (double)r->rs.wakeups : 0);
	}
	json_end(&j);
	fflush(stdout);
}

static void br_row(const struct bench_relay_opts *b, const struct br_run *runs,
		   unsigned int n)
{
	double g[DND_BR_MAX_REPEAT], c[DND_BR_MAX_REPEAT], p[DND_BR_MAX_REPEAT];
	double s[DND_BR_MAX_REPEAT], st[DND_BR_MAX_REPEAT], lo, hi, gm;
	unsigned int i, ok = 0, nc = 0, ns = 0;
	char cpu[16] = "-", pct[16] = "-", bps[16] = "-";

	for (i = 0; i < n; i++) {
		ok += runs[i].ok;
		g[i] = runs[i].gbps;
		st[i] = runs[i].mach.sys_steal_pct;
		if (runs[i].has_cpu && runs[i].seconds > 0) {
			c[nc] = br_cpu_per_gib(&runs[i]);
			p[nc++] = 100 * (runs[i].relay_user +
					 runs[i].relay_sys) / runs[i].seconds;
		}
		if (runs[i].has_stats && runs[i].rs.splice_in_calls)
			s[ns++] = relay_bytes_per_splice(&runs[i].rs);
	}
	gm = stats_median(g, n, &lo, &hi);
	if (nc) {
		snprintf(cpu, sizeof(cpu), "%.3f",
			 stats_median(c, nc, NULL, NULL));
		snprintf(pct, sizeof(pct), "%.1f",
			 stats_median(p, nc, NULL, NULL));
	}
	if (ns)
		snprintf(bps, sizeof(bps), "%.0f",
			 stats_median(s, ns, NULL, NULL));
	/* MB/s first, as everywhere (10^6 bytes); Gbit/s beside it. */
	printf("%6u  %-8s %7.0f [%6.0f..%6.0f] %7.2f %15s %12s %13s %7.1f  %s "
	       "%u/%u\n", runs[0].flows, br_name(b, runs[0].mode), gm * 125,
	       lo * 125, hi * 125, gm, cpu, pct, bps,
	       stats_median(st, n, NULL, NULL),
	       ok < n ? "FAILED" : b->no_verify ? "counted" : "verified",
	       ok, n);
	for (i = 0; i < n; i++)
		if (!runs[i].ok)
			printf("        run %u: %s\n", i + 1, runs[i].error);
	fflush(stdout);
}

static void br_header(const struct bench_relay_opts *b)
{
	char sz[32], psz[32];

	unsigned int ps = b->relay.pipe_size;

	printf("dnd bench relay: %s per run over loopback, split over the "
	       "flows%s; pipes %s; relay threads %u; %ld CPUs\n",
	       opt_fmt_size(b->bytes, sz, sizeof(sz)), b->reply ?
	       " (plus replies)" : "", ps == DND_RELAY_PIPE_DEFAULT ?
	       "1Mi (default)" : ps ? opt_fmt_size(ps, psz, sizeof(psz)) :
	       "the kernel's default", b->relay.threads,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("relay CPU = user+sys of the relay process alone (getrusage; "
	       "/proc/PID/stat for --via);\nthe load generator shares the "
	       "machine. steal = the host's, over all CPUs (/proc/stat).\n\n");
	printf("%6s  %-8s %24s %7s %15s %12s %13s %7s  %s\n", "flows", "path",
	       "MB/s median [min..max]", "Gbit/s", "relay CPU s/GiB",
	       "relay CPU %",
	       "B/splice in", "steal%", "verdict");
}

/* Runs every cell; modes interleave within a repeat to spread the noise. */
int bench_relay_run(const struct bench_relay_opts *b)
{
	static const enum br_mode order[] = { DND_BR_DIRECT, DND_BR_SPLICE,
					      DND_BR_RW, DND_BR_SOCKMAP,
					      DND_BR_VIA };
	struct br_run *runs;
	unsigned int fi, rep, mi;
	bool all_ok = true, stop = false;

	runs = calloc(DND_BR_NMODES * DND_BR_MAX_REPEAT, sizeof(*runs));
	if (!runs)
		return 1;
	if (!b->json)
		br_header(b);
	for (fi = 0; fi < b->nflows && !stop; fi++) {
		for (rep = 0; rep < b->repeat && !stop; rep++) {
			for (mi = 0; mi < DND_BR_NMODES && !stop; mi++) {
				struct br_run *r = &runs[order[mi] *
							 DND_BR_MAX_REPEAT + rep];

				if (!(b->modes & (1u << order[mi])))
					continue;
				r->mode = order[mi];
				r->flows = b->flows[fi];
				br_run_one(b, r);
				all_ok = all_ok && r->ok;
				stop = r->cl.interrupted;
				if (b->json)
					br_json(b, r, rep + 1);
			}
		}
		for (mi = 0; mi < DND_BR_NMODES && !b->json && !stop; mi++)
			if (b->modes & (1u << order[mi]))
				br_row(b, &runs[order[mi] * DND_BR_MAX_REPEAT],
				       b->repeat);
	}
	free(runs);
	if (stop)
		log_err("bench relay: interrupted");
	return all_ok && !stop ? 0 : 1;
}

int bench_relay_peer(const struct bench_relay_opts *b)
{
	struct peer_opts po = {
		.host = b->host, .port = b->port, .flows = b->flows[0],
		.bytes = b->bytes, .reply = b->reply,
		.after_eof = b->after_eof, .pause = b->pause,
		.count = b->count, .stall = b->stall, .listen_fd = -1,
		.no_verify = b->no_verify,
	};
	struct peer_result res;
	char err[256];
	int r;

	if (b->client)
		return peer_client_run(&po, &res) ? 1 : 0;
	po.listen_fd = net_listen_nb(b->host[0] ? b->host : NULL, b->port,
				     SOMAXCONN, err, sizeof(err));
	if (po.listen_fd < 0) {
		log_err("bench relay --sink: %s", err);
		return 1;
	}
	r = peer_server_run(&po, &res);
	close(po.listen_fd);
	return r ? 1 : 0;
}
