// SPDX-License-Identifier: MIT
/*
 * `dnd bench relay`: the same flows sent directly, through the splice relay
 * and through the copy relay, in one run. The relay is a child process, so
 * its CPU (its getrusage; /proc/PID/stat for another relay) is its own.
 */
#include <sys/types.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay/bench_relay.h"
#include "core/json.h"
#include "core/kernel.h"
#include "core/log.h"
#include "core/net.h"
#include "cli/opts.h"
#include "relay/relay.h"
#include "relay/relay_peer.h"
#include "core/stats.h"

#define DND_BR_MAX_FLOWS 16
#define DND_BR_MAX_REPEAT 25
#define DND_BR_GIB 1073741824.0

enum br_mode {
	DND_BR_DIRECT = 0,
	DND_BR_SPLICE,
	DND_BR_RW,
	DND_BR_VIA,		/* an external relay (HAProxy, ...) */
	DND_BR_NMODES,
};

static const char *const br_names[DND_BR_NMODES] = {
	[DND_BR_DIRECT] = "direct",
	[DND_BR_SPLICE] = "splice",
	[DND_BR_RW] = "rw",
	[DND_BR_VIA] = "via",
};

struct br_opts {
	unsigned int flows[DND_BR_MAX_FLOWS];
	unsigned int nflows;
	bool modes[DND_BR_NMODES];
	uint64_t bytes, reply;
	unsigned int repeat;
	uint16_t sink_port;
	char via_host[256];
	uint16_t via_port;
	long via_pid;
	const char *via_name;
	double stall;
	bool json, no_verify;
	struct relay_opts relay;	/* the knobs passed to our relay */
	/* test peers */
	bool sink, client, after_eof, pause;
	char host[256];
	uint16_t port;
	bool has_l, has_t, has_flows;
	unsigned int count;
};

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

/* Reads exactly len bytes of a child's report; false if it died first. */
static bool br_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/*
 * Forks a child that runs the sink (relay == NULL) or our relay on lfd and
 * writes its result struct into a pipe. Returns the pid with *rfd the
 * pipe's read end, or -errno.
 */
static pid_t br_spawn(const struct br_opts *b, int lfd, int other_fd,
		      const struct relay_opts *relay, unsigned int flows,
		      int *rfd)
{
	int pfd[2];
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) == -1)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid == -1) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (other_fd >= 0)
			close(other_fd);
		if (relay) {
			struct relay_stats st;

			relay_run(relay, &st);
			if (write(pfd[1], &st, sizeof(st)) < 0)
				_exit(1);
		} else {
			struct peer_opts po = {
				.listen_fd = lfd, .count = flows,
				.stall = b->stall, .quiet = true,
				.no_verify = b->no_verify,
			};
			struct peer_result res;

			peer_server_run(&po, &res);
			if (write(pfd[1], &res, sizeof(res)) < 0)
				_exit(1);
		}
		_exit(0);
	}
	close(pfd[1]);
	*rfd = pfd[0];
	return pid;
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

/* Starts what a run needs behind the client; fills po with where to go. */
static int br_start(const struct br_opts *b, struct br_run *run,
		    struct peer_opts *po, pid_t *spid, int *sfd_r,
		    pid_t *rpid, int *rfd_r)
{
	struct relay_opts ro = b->relay;
	uint16_t sport, rport;
	int sfd, lfd;

	sfd = br_listen_any(b->sink_port, &sport);
	if (sfd < 0)
		return sfd;
	*spid = br_spawn(b, sfd, -1, NULL, run->flows, sfd_r);
	close(sfd);
	if (*spid < 0)
		return *spid;
	po->host = "127.0.0.1";
	po->port = sport;
	if (run->mode == DND_BR_VIA) {
		po->host = b->via_host;
		po->port = b->via_port;
	}
	if (run->mode != DND_BR_SPLICE && run->mode != DND_BR_RW)
		return 0;
	lfd = br_listen_any(0, &rport);
	if (lfd < 0)
		return lfd;
	ro.listen_fd = lfd;
	ro.target_host = "127.0.0.1";
	ro.target_port = sport;
	ro.mode = run->mode == DND_BR_SPLICE ? DND_RELAY_SPLICE : DND_RELAY_RW;
	if (ro.mode == DND_RELAY_RW)
		ro.pipe_size = 0;	/* unused by the copy path */
	ro.max_conn = run->flows + 16;
	ro.quiet = true;
	if (!ro.max_pipes)
		ro.max_pipes = 2 * ro.max_conn;
	*rpid = br_spawn(b, lfd, -1, &ro, run->flows, rfd_r);
	close(lfd);
	if (*rpid < 0)
		return *rpid;
	po->port = rport;
	return 0;
}

/* Collects a child's report; a child that died first leaves it zeroed. */
static bool br_reap(pid_t pid, int fd, void *buf, size_t len, bool term)
{
	bool got;
	int status;

	if (term)
		kill(pid, SIGTERM);
	got = br_read_all(fd, buf, len);
	close(fd);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return got && WIFEXITED(status);
}

static void br_run_one(const struct br_opts *b, struct br_run *run)
{
	struct peer_opts po = {
		.flows = run->flows, .bytes = b->bytes, .reply = b->reply,
		.stall = b->stall, .quiet = true, .no_verify = b->no_verify,
	};
	pid_t spid = -1, rpid = -1;
	int sfd = -1, rfd = -1, e, rc = -1;
	long cpid;
	double u0 = 0, s0 = 0, u1 = 0, s1 = 0;
	bool sink_ok = false;

	e = br_start(b, run, &po, &spid, &sfd, &rpid, &rfd);
	cpid = run->mode == DND_BR_VIA ? b->via_pid : -1;
	run->has_cpu = cpid > 0 && !br_proc_cpu(cpid, &u0, &s0);
	if (!e)
		rc = peer_client_run(&po, &run->cl);
	if (run->has_cpu)
		run->has_cpu = !br_proc_cpu(cpid, &u1, &s1);
	run->relay_user = u1 - u0;
	run->relay_sys = s1 - s0;
	if (rpid > 0)
		run->has_stats = br_reap(rpid, rfd, &run->rs, sizeof(run->rs),
					 true);
	/* Our own relay counts its CPU in microseconds, not 10 ms ticks. */
	if (run->has_stats) {
		run->relay_user = run->rs.cpu_user;
		run->relay_sys = run->rs.cpu_sys;
		run->has_cpu = true;
	}
	if (spid > 0)
		sink_ok = br_reap(spid, sfd, &run->sk, sizeof(run->sk),
				  rc != 0);
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
	run->ok = !e && rc == 0 && sink_ok && !run->sk.failed &&
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
	else if (!run->ok)
		snprintf(run->error, sizeof(run->error), "the sink verified "
			 "%u of %u flows", run->sk.ok, run->flows);
}

static double br_cpu_per_gib(const struct br_run *r)
{
	return r->has_cpu && r->bytes ? (r->relay_user + r->relay_sys) /
					((double)r->bytes / DND_BR_GIB) : -1;
}

static const char *br_name(const struct br_opts *b, enum br_mode m)
{
	return m == DND_BR_VIA ? b->via_name : br_names[m];
}

static void br_json(const struct br_opts *b, const struct br_run *r,
		    unsigned int rep)
{
	struct json j;

	json_begin_doc(&j, stdout, "bench_relay_run");
	json_str(&j, "path", br_name(b, r->mode));
	json_u64(&j, "flows", r->flows);
	if (r->mode == DND_BR_SPLICE || r->mode == DND_BR_RW)
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
		json_f64(&j, "relay_cpu_user", r->relay_user);
		json_f64(&j, "relay_cpu_sys", r->relay_sys);
		json_f64(&j, "relay_cpu_s_per_gib", br_cpu_per_gib(r));
		json_f64(&j, "relay_cpu_pct", r->seconds > 0 ? 100 *
				(r->relay_user + r->relay_sys) / r->seconds : 0);
	}
	json_f64(&j, "client_cpu", r->cl.cpu_user + r->cl.cpu_sys);
	json_f64(&j, "sink_cpu", r->sk.cpu_user + r->sk.cpu_sys);
	if (r->has_stats) {
		json_u64(&j, "splice_in_calls", r->rs.splice_in_calls);
		json_f64(&j, "bytes_per_splice_in",
			 relay_bytes_per_splice(&r->rs));
		json_u64(&j, "splice_out_calls", r->rs.splice_out_calls);
		json_u64(&j, "read_calls", r->rs.read_calls);
		json_u64(&j, "write_calls", r->rs.write_calls);
		json_u64(&j, "eagain_pipe_full", r->rs.eagain_pipe_full);
		json_u64(&j, "eagain_empty", r->rs.eagain_empty);
		json_u64(&j, "eagain_out", r->rs.eagain_out);
		json_u64(&j, "fallbacks", r->rs.fallbacks);
		json_u64(&j, "pipes_peak", r->rs.pipes_peak);
		json_u64(&j, "pipe_size", r->rs.pipe_size_min);
		json_u64(&j, "wakeups", r->rs.wakeups);
		json_f64(&j, "events_per_wakeup", r->rs.wakeups ?
				(double)r->rs.events / (double)r->rs.wakeups : 0);
	}
	json_end(&j);
	fflush(stdout);
}

static void br_row(const struct br_opts *b, const struct br_run *runs,
		   unsigned int n)
{
	double g[DND_BR_MAX_REPEAT], c[DND_BR_MAX_REPEAT], p[DND_BR_MAX_REPEAT];
	double s[DND_BR_MAX_REPEAT], lo, hi, gm;
	unsigned int i, ok = 0, nc = 0, ns = 0;
	char cpu[16] = "-", pct[16] = "-", bps[16] = "-";

	for (i = 0; i < n; i++) {
		ok += runs[i].ok;
		g[i] = runs[i].gbps;
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
	printf("%6u  %-8s %7.2f [%6.2f..%6.2f] %15s %12s %13s  %s %u/%u\n",
	       runs[0].flows, br_name(b, runs[0].mode), gm, lo, hi, cpu, pct,
	       bps, ok < n ? "FAILED" : b->no_verify ? "counted" : "verified",
	       ok, n);
	for (i = 0; i < n; i++)
		if (!runs[i].ok)
			printf("        run %u: %s\n", i + 1, runs[i].error);
	fflush(stdout);
}

static void br_header(const struct br_opts *b)
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
	       "machine.\n\n");
	printf("%6s  %-8s %24s %15s %12s %13s  %s\n", "flows", "path",
	       "Gbit/s median [min..max]", "relay CPU s/GiB", "relay CPU %",
	       "B/splice in", "verdict");
}

/* Runs every cell; modes interleave within a repeat to spread the noise. */
static int br_bench(const struct br_opts *b)
{
	static const enum br_mode order[] = { DND_BR_DIRECT, DND_BR_SPLICE,
					      DND_BR_RW, DND_BR_VIA };
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

				if (!b->modes[order[mi]])
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
			if (b->modes[order[mi]])
				br_row(b, &runs[order[mi] * DND_BR_MAX_REPEAT],
				       b->repeat);
	}
	free(runs);
	if (stop)
		log_err("bench relay: interrupted");
	return all_ok && !stop ? 0 : 1;
}

static int br_peers(const struct br_opts *b)
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

enum {
	OPT_FLOWS = 256,
	OPT_BYTES,
	OPT_REPLY,
	OPT_MODES,
	OPT_REPEAT,
	OPT_PIPE_SIZE,
	OPT_RCVLOWAT,
	OPT_SPLICE_MAX,
	OPT_MAXEVENTS,
	OPT_BUDGET,
	OPT_SINK_PORT,
	OPT_VIA,
	OPT_VIA_PID,
	OPT_VIA_NAME,
	OPT_STALL,
	OPT_JSON,
	OPT_SINK,
	OPT_CLIENT,
	OPT_COUNT,
	OPT_HALF_CLOSE,
	OPT_PAUSE,
	OPT_NO_VERIFY,
	OPT_THREADS,
};

static const struct option br_longopts[] = {
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "reply", required_argument, NULL, OPT_REPLY },
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "pipe-size", required_argument, NULL, OPT_PIPE_SIZE },
	{ "rcvlowat", required_argument, NULL, OPT_RCVLOWAT },
	{ "splice-max", required_argument, NULL, OPT_SPLICE_MAX },
	{ "maxevents", required_argument, NULL, OPT_MAXEVENTS },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "sink-port", required_argument, NULL, OPT_SINK_PORT },
	{ "via", required_argument, NULL, OPT_VIA },
	{ "via-pid", required_argument, NULL, OPT_VIA_PID },
	{ "via-name", required_argument, NULL, OPT_VIA_NAME },
	{ "stall", required_argument, NULL, OPT_STALL },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "sink", no_argument, NULL, OPT_SINK },
	{ "client", no_argument, NULL, OPT_CLIENT },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "half-close", no_argument, NULL, OPT_HALF_CLOSE },
	{ "pause", no_argument, NULL, OPT_PAUSE },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void br_usage(FILE *f)
{
	fprintf(f,
		"usage: dnd bench relay [--flows 1,100,1000] [--bytes SIZE] "
		"[options]\n\n"
		"Sends the same flows directly, through 'dnd relay -m splice' "
		"and through\n'dnd relay -m rw' (each relay a child process), "
		"checks every byte at the\nsink, and prints throughput, the "
		"relay's CPU per GiB and bytes per splice.\n\n"
		"  --flows LIST       flows at once, a comma list (default "
		"1,100,1000)\n"
		"  --bytes SIZE       payload per run, split over the flows "
		"(default 2Gi)\n"
		"  --reply SIZE       payload sent back at the same time, "
		"split (default 0)\n"
		"  --modes LIST       direct,splice,rw (default all three)\n"
		"  --repeat N         runs per cell; the table shows the "
		"median (default 1)\n"
		"  --pipe-size SIZE, --rcvlowat SIZE, --splice-max SIZE, "
		"--maxevents N,\n"
		"  --budget SIZE, --threads N\n"
		"                     passed to the relay (see 'dnd relay "
		"--help')\n"
		"  --sink-port PORT   the sink's port on 127.0.0.1 (default: "
		"any free one)\n"
		"  --via HOST:PORT    also measure another relay listening "
		"there, which must\n"
		"                     forward to 127.0.0.1:--sink-port "
		"(e.g. HAProxy)\n"
		"  --via-pid PID      its process, for its CPU; --via-name "
		"NAME its label\n"
		"  --stall SEC        fail a run when nothing moves for SEC "
		"(default 30)\n"
		"  --no-verify        the sink only counts (recv MSG_TRUNC): "
		"a cheaper load\n"
		"                     generator, so the relay's own cost shows "
		"more\n"
		"  --json             one JSON object per run (JSON Lines)\n\n"
		"The load generator alone, for tests and other relays:\n"
		"  --sink -l [ADDR:]PORT [--count N] [--pause]   check flows "
		"until N are done\n"
		"           (or SIGTERM); --pause: read nothing but headers "
		"until SIGUSR1\n"
		"  --client -t HOST:PORT [--flows N] [--bytes SIZE] [--reply "
		"SIZE]\n"
		"           [--half-close] [--pause]   --half-close: the sink "
		"replies after the\n"
		"           client's FIN; --pause: stop sending halfway until "
		"SIGUSR1\n"
		"Exit: 0 every flow verified, 1 a flow or run failed, 2 "
		"usage error.\n");
}

static void br_list(const char *opt, const char *arg, struct br_opts *b,
		    int *bad)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	uint64_t v;

	if (!copy) {
		(*bad)++;
		return;
	}
	if (opt[2] == 'f') {
		b->nflows = 0;
		b->has_flows = true;
	} else {
		memset(b->modes, 0, sizeof(b->modes));
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt[2] == 'm') {
			if (!strcmp(tok, "direct") || !strcmp(tok, "splice") ||
			    !strcmp(tok, "rw"))
				b->modes[!strcmp(tok, "direct") ? DND_BR_DIRECT :
					 !strcmp(tok, "splice") ? DND_BR_SPLICE :
					 DND_BR_RW] = true;
			else {
				log_err("--modes: unknown '%s'; use direct, "
					"splice, rw", tok);
				(*bad)++;
			}
		} else if (b->nflows == DND_BR_MAX_FLOWS) {
			log_err("--flows: at most %d values", DND_BR_MAX_FLOWS);
			(*bad)++;
			break;
		} else {
			opt_num_arg("--flows", tok, false, 1, 100000, &v, bad);
			b->flows[b->nflows++] = (unsigned int)v;
		}
	}
	free(copy);
}

static void br_opt(struct br_opts *b, int opt, const char *arg, int *bad)
{
	uint64_t v;

	switch (opt) {
	case OPT_FLOWS:
	case OPT_MODES:
		br_list(opt == OPT_FLOWS ? "--flows" : "--modes", arg, b, bad);
		break;
	case OPT_BYTES:
		opt_num_arg("--bytes", arg, true, 0, 1ULL << 50, &b->bytes, bad);
		break;
	case OPT_REPLY:
		opt_num_arg("--reply", arg, true, 0, 1ULL << 50, &b->reply, bad);
		break;
	case OPT_REPEAT:
		opt_num_arg("--repeat", arg, false, 1, DND_BR_MAX_REPEAT, &v, bad);
		b->repeat = (unsigned int)v;
		break;
	case OPT_PIPE_SIZE:
		opt_num_arg("--pipe-size", arg, true, 0, 1U << 30, &v, bad);
		b->relay.pipe_size = (unsigned int)v;
		break;
	case OPT_RCVLOWAT:
		opt_num_arg("--rcvlowat", arg, true, 1, 1U << 30, &v, bad);
		b->relay.rcvlowat = (unsigned int)v;
		break;
	case OPT_SPLICE_MAX:
		opt_num_arg("--splice-max", arg, true, 1, 1U << 30, &v, bad);
		b->relay.splice_max = v;
		break;
	case OPT_MAXEVENTS:
		opt_num_arg("--maxevents", arg, false, 1, 65536, &v, bad);
		b->relay.maxevents = (unsigned int)v;
		break;
	case OPT_BUDGET:
		opt_num_arg("--budget", arg, true, 1, 1ULL << 40, &v, bad);
		b->relay.budget = v;
		break;
	case OPT_THREADS:
		opt_num_arg("--threads", arg, false, 1, DND_RELAY_MAX_THREADS,
			    &v, bad);
		b->relay.threads = (unsigned int)v;
		break;
	case OPT_SINK_PORT:
		opt_num_arg("--sink-port", arg, false, 1, 65535, &v, bad);
		b->sink_port = (uint16_t)v;
		break;
	case OPT_VIA:
		opt_hostport_arg("--via", arg, false, b->via_host,
				 sizeof(b->via_host), &b->via_port, bad);
		b->modes[DND_BR_VIA] = true;
		break;
	case OPT_VIA_PID:
		opt_num_arg("--via-pid", arg, false, 1, 1U << 30, &v, bad);
		b->via_pid = (long)v;
		break;
	case OPT_VIA_NAME:
		b->via_name = arg;
		break;
	case OPT_STALL:
		if (opt_parse_seconds(arg, &b->stall) || b->stall <= 0) {
			log_err("--stall '%s': give seconds, e.g. 30", arg);
			(*bad)++;
		}
		break;
	case OPT_COUNT:
		opt_num_arg("--count", arg, false, 0, 1U << 30, &v, bad);
		b->count = (unsigned int)v;
		break;
	case OPT_JSON:
		b->json = true;
		break;
	case OPT_SINK:
		b->sink = true;
		break;
	case OPT_CLIENT:
		b->client = true;
		break;
	case OPT_HALF_CLOSE:
		b->after_eof = true;
		break;
	case OPT_PAUSE:
		b->pause = true;
		break;
	case OPT_NO_VERIFY:
		b->no_verify = true;
		break;
	}
}

static void br_defaults(struct br_opts *b)
{
	memset(b, 0, sizeof(*b));
	b->flows[0] = 1;
	b->flows[1] = 100;
	b->flows[2] = 1000;
	b->nflows = 3;
	b->modes[DND_BR_DIRECT] = b->modes[DND_BR_SPLICE] = true;
	b->modes[DND_BR_RW] = true;
	b->bytes = 2ULL << 30;
	b->repeat = 1;
	b->stall = 30;
	b->via_name = "via";
	relay_defaults(&b->relay);
	b->relay.max_pipes = 0;
}

/* Conflicts between options, all reported; returns how many. */
static int br_conflicts(const struct br_opts *b, bool peers_only)
{
	int bad = 0;

	if (b->sink && b->client) {
		log_err("--sink and --client conflict: one process is one end");
		bad++;
	}
	if (b->sink && !b->has_l) {
		log_err("--sink needs -l [ADDR:]PORT");
		bad++;
	}
	if (b->client && (!b->has_t || b->nflows != 1)) {
		log_err("--client needs -t HOST:PORT and one --flows value");
		bad++;
	}
	if (!b->sink && !b->client && (b->has_l || b->has_t || peers_only)) {
		log_err("-l, -t, --count, --half-close and --pause belong to "
			"--sink or --client");
		bad++;
	}
	if (b->modes[DND_BR_VIA] && !b->sink_port) {
		log_err("--via needs --sink-port: the port its relay forwards "
			"to on 127.0.0.1");
		bad++;
	}
	return bad;
}

/* Returns -1 to run, or an exit code (help: 0, usage: 2). */
static int br_parse(int argc, char **argv, struct br_opts *b)
{
	int opt, bad = 0;
	bool peers_only = false;

	br_defaults(b);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":l:t:h", br_longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'l':
		case 't':
			opt_hostport_arg(opt == 'l' ? "-l" : "-t", optarg,
					 opt == 'l', b->host, sizeof(b->host),
					 &b->port, &bad);
			*(opt == 'l' ? &b->has_l : &b->has_t) = true;
			break;
		case 'h':
			br_usage(stdout);
			return 0;
		case ':':
			log_err("%s needs a value", argv[optind - 1]);
			bad++;
			break;
		case '?':
			log_err("unknown option '%s'", argv[optind - 1]);
			bad++;
			break;
		default:
			peers_only |= opt == OPT_COUNT ||
				      opt == OPT_HALF_CLOSE || opt == OPT_PAUSE;
			br_opt(b, opt, optarg, &bad);
			break;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument '%s'", argv[optind]);
		bad++;
	}
	if (b->client && !b->has_flows)
		b->nflows = 1;
	bad += br_conflicts(b, peers_only);
	if (bad) {
		log_err("see 'dnd bench relay --help'");
		return 2;
	}
	return -1;
}

int cmd_bench_relay(int argc, char **argv)
{
	struct br_opts b;
	int r = br_parse(argc, argv, &b);

	if (r >= 0)
		return r;
	if (b.sink || b.client)
		return br_peers(&b);
	return br_bench(&b);
}
