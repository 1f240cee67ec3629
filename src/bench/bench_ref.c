// SPDX-License-Identifier: MIT
/*
 * Reference rows. memcpy over buffers far larger than the caches is what one
 * copy of the data costs here; splice /dev/zero -> pipe -> /dev/null is what
 * the pipe machinery alone can do with no socket; iperf3 is what everyone
 * else quotes. A dnd figure alone proves nothing on a shared machine; its
 * ratio to these, taken minutes apart, does.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "bench/bench_proc.h"
#include "bench/bench_ref.h"
#include "bench/bench_ref_disk.h"
#include "bench/bench_run.h"
#include "core/io.h"
#include "core/log.h"
#include "cli/opts.h"
#include "core/pipe.h"
#include "core/stats.h"

static void ref_fail(struct bench_ref *r, const char *why)
{
	r->dead = true;
	if (!r->why[0])
		snprintf(r->why, sizeof(r->why), "%s", why);
}

static void ref_add(struct bench_ref *r, double mbps, double usmb)
{
	if (r->n < BENCH_MAX_REPEAT) {
		r->v[r->n] = mbps;
		r->cpu[r->n++] = usmb;
	}
}

static double ref_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/*
 * Maps and first-touches the buffers once per bench: first touch is a
 * page-fault benchmark, not a copy one. Bench forks its children later:
 * without MADV_DONTFORK every page would turn copy-on-write, and the next
 * sample would time the faults again (16279 MB/s, then 571). Small pages,
 * as dnd's own buffers have, whatever the machine's THP setting.
 */
static int ref_memcpy_map(struct bench *b)
{
	size_t len = (size_t)(b->o.quick ? 64 : 256) << 20;

	b->mc_x = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->mc_y = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->mc_x == MAP_FAILED || b->mc_y == MAP_FAILED) {
		if (b->mc_x != MAP_FAILED)
			munmap(b->mc_x, len);
		if (b->mc_y != MAP_FAILED)
			munmap(b->mc_y, len);
		b->mc_x = b->mc_y = NULL;
		return -ENOMEM;
	}
	/* Advisory: where refused, the fault check below still holds. */
	madvise(b->mc_x, len, MADV_DONTFORK);
	madvise(b->mc_y, len, MADV_DONTFORK);
	madvise(b->mc_x, len, MADV_NOHUGEPAGE);
	madvise(b->mc_y, len, MADV_NOHUGEPAGE);
	memset(b->mc_x, 1, len);
	memset(b->mc_y, 2, len);
	memcpy(b->mc_y, b->mc_x, len);	/* an untimed warm pass */
	b->mc_len = len;
	return 0;
}

static long ref_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Tries a sample this many times before giving up on a faulting one. */
#define REF_MEMCPY_TRIES	4

/*
 * Passes timed one by one, each on this thread's CPU clock; the sample is
 * the fastest. One bench run on this 2-CPU VM had its memcpy samples fall
 * from 10206 to 629 MB/s (four passes timed as one on the wall clock), with
 * the pipe ceiling falling alike: vmstat showed 8.4 runnable tasks on 2
 * CPUs (other programs) and steal 0 (this host reports none). Only the wall
 * clock saw the run-queue waits. On the CPU clock, a pass still runs slower
 * when another CPU loads the memory bus, and that only ever slows it: at a
 * load of 8, the fastest of 24 passes ranged 11515-14382 MB/s over 12
 * samples (1.25x), the fastest wall-clock pass 6495-12350 (1.90x).
 */
#define REF_MEMCPY_PASSES	24

static double ref_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One timed sample: copies the buffers back and forth; false when a page
 * fault came during it (it timed the fault, not the copy). */
static bool ref_memcpy_once(struct bench *b, double *mbps, double *usmb)
{
	long f0 = ref_minflt();
	double c0 = ref_cpu(), best = 0;
	volatile char sink;
	unsigned int p;

	for (p = 0; p < REF_MEMCPY_PASSES && !io_stop_signal; p++) {
		double t0 = ref_thread_cpu(), dt;

		memcpy(p % 2 ? b->mc_x : b->mc_y, p % 2 ? b->mc_y : b->mc_x,
		       b->mc_len);
		dt = ref_thread_cpu() - t0;
		if (dt > 0 && (double)b->mc_len / dt > best)
			best = (double)b->mc_len / dt;
	}
	sink = b->mc_x[b->mc_len / 2] + b->mc_y[b->mc_len / 3];
	(void)sink;
	*mbps = best / 1e6;
	*usmb = (ref_cpu() - c0) * 1e6 / ((double)b->mc_len * p / 1e6);
	return ref_minflt() == f0;
}

static void ref_memcpy(struct bench *b, struct bench_ref *r)
{
	double mbps, usmb;
	unsigned int i;

	if (!b->mc_x && ref_memcpy_map(b)) {
		ref_fail(r, "cannot map the buffers");
		return;
	}
	for (i = 0; i < REF_MEMCPY_TRIES; i++) {
		if (ref_memcpy_once(b, &mbps, &usmb)) {
			ref_add(r, mbps, usmb);
			return;
		}
		fprintf(stderr, "dnd bench: reference memcpy: page faults "
			"during a sample (%.0f MB/s), not counted; again\n",
			mbps);
	}
	ref_fail(r, "page faults in every sample: it would time the "
		 "faults, not the copy");
}

/* Moves total bytes /dev/zero -> pipe -> /dev/null once. 0 or -errno. */
static int ref_pipe_once(int zero, int null, const struct dnd_pipe *p,
			 uint64_t total)
{
	uint64_t moved = 0;

	while (moved < total && !io_stop_signal) {
		size_t want = total - moved < p->size ? (size_t)(total - moved) :
							 p->size;
		ssize_t n = splice(zero, NULL, p->wr, NULL, want, SPLICE_F_MOVE);
		ssize_t out = 0;

		if (n <= 0)
			return n ? -errno : -EIO;
		while (out < n) {
			ssize_t k = splice(p->rd, NULL, null, NULL,
					   (size_t)(n - out), SPLICE_F_MOVE);

			if (k <= 0)
				return k ? -errno : -EIO;
			out += k;
		}
		moved += (uint64_t)n;
	}
	return io_stop_signal ? -EINTR : 0;
}

/* Allocates no user memory: the pipe's pages are the kernel's, so the
 * forks that turn the memcpy buffers copy-on-write cannot reach it. */
static void ref_pipe(struct bench_ref *r, uint64_t total)
{
	struct dnd_pipe p = { -1, -1, 0 };
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double c0 = ref_cpu(), t0 = stats_now(), t1;
	int rc = -EBADF;

	if (zero != -1 && null != -1)
		rc = pipe_open(&p, r->pipe);
	if (!rc)
		rc = ref_pipe_once(zero, null, &p, total);
	t1 = stats_now();
	if (!rc)
		ref_add(r, (double)total / (t1 - t0) / 1e6,
			(ref_cpu() - c0) * 1e6 / ((double)total / 1e6));
	else if (rc != -EINTR)
		ref_fail(r, strerror(-rc));
	pipe_close(&p);
	if (zero != -1)
		close(zero);
	if (null != -1)
		close(null);
}

/* Reads iperf3's --json; 0 with MB/s and CPU us/MB, else -1 + why. */
static int ref_iperf_read(const struct bench_child *k, double *mbps,
			  double *usmb, char *why, size_t len)
{
	struct bjson j = { 0 };
	double bps = 0, secs = 0, bytes = 0, host = 0, remote = 0;
	char err[256];
	const char *e;
	int r = -1;

	if (bjson_parse(&j, k->out ? k->out : "", k->out_len, err, sizeof(err))) {
		bench_child_why(k, why, len);
		return -1;
	}
	e = bjson_str(&j, "error");
	if (e)
		snprintf(why, len, "%s", e);
	else if (!bjson_num(&j, "end.sum_received.bits_per_second", &bps) ||
		 !bjson_num(&j, "end.sum_received.seconds", &secs) ||
		 !bjson_num(&j, "end.sum_received.bytes", &bytes))
		snprintf(why, len, "iperf3's report has no end.sum_received");
	else
		r = 0;
	if (!r) {
		*mbps = bps / 8e6;
		bjson_num(&j, "end.cpu_utilization_percent.host_total", &host);
		bjson_num(&j, "end.cpu_utilization_percent.remote_total", &remote);
		*usmb = bytes > 0 ? (host + remote) / 100 * secs * 1e6 /
				    (bytes / 1e6) : -1;
	}
	bjson_free(&j);
	return r;
}

/* One iperf3 server (-1: one test) and client pair. 0, -EINTR or -EIO. */
static int ref_iperf_once(struct bench *b, const char *exe, bool l1m,
			  uint64_t bytes, double *mbps, double *usmb,
			  char *why, size_t len)
{
	char port[8], n[24], w[24];
	/* Its per-second lines go to /dev/null: nobody reads its stdout while
	 * the client runs, and a full pipe would stall a long reference. */
	char *srv[] = { (char *)exe, "-s", "-1", "-p", port, "-B",
			(char *)b->bind, "--logfile", "/dev/null", NULL };
	char *cli[16] = { (char *)exe, "-c", (char *)b->host, "-p", port, "-n",
			  n, "--json" };
	struct bench_child s, c;
	int k = 8, pin = b->o.pin && b->facts.ncpu > 1, rc, tries;
	double deadline = stats_now() + bench_deadline(b, bytes);

	snprintf(port, sizeof(port), "%u", bench_port(b));
	snprintf(n, sizeof(n), "%llu", (unsigned long long)bytes);
	if (l1m) {
		cli[k++] = "-l";
		cli[k++] = "1M";
	}
	if (b->o.window) {
		snprintf(w, sizeof(w), "%llu", (unsigned long long)b->o.window);
		cli[k++] = "-w";
		cli[k++] = w;
	}
	cli[k] = NULL;
	rc = bench_spawn(&s, srv, b->ns_made ? b->nsp_recv : NULL, pin ? 1 : -1);
	if (rc) {
		snprintf(why, len, "cannot start iperf3: %s", strerror(-rc));
		return -EIO;
	}
	/* The server needs a moment to listen; a refused connect is retried. */
	for (tries = 0; tries < 100; tries++) {
		rc = bench_spawn(&c, cli, b->ns_made ? b->nsp_send : NULL,
				 pin ? 0 : -1);
		if (!rc)
			rc = bench_wait(&c, 1, deadline, 1e9);
		if (!rc)
			rc = ref_iperf_read(&c, mbps, usmb, why, len) ? -EIO : 0;
		bench_child_free(&c);
		if (rc != -EIO || !strstr(why, "refused") || io_stop_signal)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	}
	if (rc == -ETIMEDOUT)
		snprintf(why, len, "iperf3 client killed after %.0f s",
			 bench_deadline(b, bytes));
	bench_wait(&s, 1, stats_now() + 5, 5);
	bench_child_free(&s);
	return rc == -EINTR || io_stop_signal ? -EINTR : rc ? -EIO : 0;
}

static void ref_iperf(struct bench *b, struct bench_ref *r, uint64_t bytes)
{
	double mbps, usmb;
	char exe[256];
	int rc;

	if (!bench_find_tool("iperf3", exe, sizeof(exe))) {
		ref_fail(r, "iperf3 is not installed (apt-get install iperf3, "
			 "or make deps)");
		return;
	}
	rc = ref_iperf_once(b, exe, !strcmp(r->key, "iperf3-l1M"), bytes, &mbps,
			    &usmb, r->why, sizeof(r->why));
	if (!rc)
		ref_add(r, mbps, usmb);
	else if (rc != -EINTR)
		r->dead = true;
}

static struct bench_ref *ref_next(struct bench *b, const char *key)
{
	struct bench_ref *r;

	DND_BUG_ON(b->nrefs >= BENCH_MAX_REFS);
	r = &b->refs[b->nrefs++];
	memset(r, 0, sizeof(*r));
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->usec_per_mb = -1;
	return r;
}

static void ref_plan_pipe(struct bench *b, unsigned int want)
{
	struct bench_ref *r = ref_next(b, "pipe");
	struct dnd_pipe p;
	char sz[24];
	int rc = pipe_open(&p, want);

	r->pipe = want;
	snprintf(r->name, sizeof(r->name), "pipe ceiling: splice /dev/zero -> "
		 "pipe %s%s -> /dev/null%s", rc ? "?" : opt_fmt_size(p.size, sz,
		 sizeof(sz)), want ? "" : " (default)", b->o.remote ?
		 ", this host" : "");
	if (rc)
		ref_fail(r, strerror(-rc));
	else
		pipe_close(&p);
}

/* A local file -> file table gets the two disk references, at its size. */
static void ref_plan_disk(struct bench *b)
{
	const struct bench_group *g = NULL;
	struct bench_ref *r;
	char sz[24];
	unsigned int i;

	for (i = 0; i < b->ngroups && !g; i++)
		if (b->groups[i].src == BENCH_SRC_FILE &&
		    b->groups[i].sink == BENCH_SINK_FILE)
			g = &b->groups[i];
	if (!g || b->o.remote)
		return;
	opt_fmt_size(g->size, sz, sizeof(sz));
	r = ref_next(b, "copy");
	r->bytes = g->size;
	snprintf(r->name, sizeof(r->name), "local copy: read/write 1 MiB, "
		 "fdatasync, %s", sz);
	r = ref_next(b, "device");
	r->bytes = g->size;
	snprintf(r->name, sizeof(r->name), "device: O_DIRECT 1 MiB writes, 16 "
		 "in flight, fdatasync, %s", sz);
}

static void ref_disk(struct bench *b, struct bench_ref *r)
{
	double mbps = 0, usmb = 0;
	char why[200];
	int rc = !strcmp(r->key, "copy") ?
		 bench_disk_copy(b->src_path, b->dir, r->bytes, &mbps, &usmb,
				 why, sizeof(why)) :
		 bench_disk_direct(b->dir, r->bytes, &mbps, &usmb, why,
				   sizeof(why));

	if (!rc)
		ref_add(r, mbps, usmb);
	else if (rc != -EINTR)
		ref_fail(r, why);
}

void bench_refs_plan(struct bench *b)
{
	unsigned int i, max = pipe_max_size(), sizes[BENCH_MAX_LIST + 1];
	unsigned int nsz = 0;
	struct bench_ref *r;

	r = ref_next(b, "memcpy");
	snprintf(r->name, sizeof(r->name), "memcpy %u MiB buffers, fastest of "
		 "%u passes on CPU time%s", b->o.quick ? 64 : 256,
		 REF_MEMCPY_PASSES, b->o.remote ? ", this host" : "");
	for (i = 0; i < b->o.npipes; i++)
		sizes[nsz++] = b->o.pipes[i];
	/* The biggest pipe allowed is the ceiling the tuned paths aim at. */
	for (i = 0; i < nsz && sizes[i] != max; i++)
		;
	if (max && i == nsz)
		sizes[nsz++] = max;
	for (i = 0; i < nsz; i++)
		ref_plan_pipe(b, sizes[i]);
	ref_plan_disk(b);
	if (!b->o.compare)
		return;
	r = ref_next(b, "iperf3");
	snprintf(r->name, sizeof(r->name), "iperf3 default (128 KiB writes), "
		 "same path and bytes");
	r = ref_next(b, "iperf3-l1M");
	snprintf(r->name, sizeof(r->name), "iperf3 -l 1M, same path and bytes");
}

int bench_refs_round(struct bench *b, uint64_t net_bytes)
{
	unsigned int i;

	for (i = 0; i < b->nrefs && !io_stop_signal; i++) {
		struct bench_ref *r = &b->refs[i];
		unsigned int n = r->n;
		struct dnd_sample s0, s1;
		struct dnd_cost cost;

		if (r->dead)
			continue;
		stats_sample(&s0);
		if (!strcmp(r->key, "memcpy"))
			ref_memcpy(b, r);
		else if (!strcmp(r->key, "pipe"))
			ref_pipe(r, net_bytes);
		else if (r->bytes)
			ref_disk(b, r);
		else
			ref_iperf(b, r, net_bytes);
		stats_sample(&s1);
		if (io_stop_signal)
			break;
		/* The host's share beside each sample: on a VM that reports
		 * steal, a slow sample says whether the host took the CPU. */
		stats_cost(&s0, &s1, 0, &cost);
		if (r->n > n)
			r->steal[r->n - 1] = cost.sys_steal_pct;
		if (r->dead)
			fprintf(stderr, "dnd bench: reference %s: not measured: "
				"%s\n", r->name, r->why);
		else
			fprintf(stderr, "dnd bench: reference %s: %.0f MB/s, "
				"steal %.1f%%\n", r->name, r->v[r->n - 1],
				r->steal[r->n - 1]);
	}
	return io_stop_signal ? -EINTR : 0;
}

void bench_refs_finish(struct bench *b)
{
	unsigned int i;

	for (i = 0; i < b->nrefs; i++) {
		struct bench_ref *r = &b->refs[i];
		double v[BENCH_MAX_REPEAT];

		r->ok = r->n > 0 && !r->dead;
		if (!r->ok)
			continue;
		r->why[0] = '\0';	/* a refused first connect, retried */
		memcpy(v, r->v, sizeof(v));
		r->mbps = stats_median(v, r->n, &r->mbps_min, &r->mbps_max);
		memcpy(v, r->cpu, sizeof(v));
		r->usec_per_mb = stats_median(v, r->n, NULL, NULL);
		memcpy(v, r->steal, sizeof(v));
		r->steal_pct = stats_median(v, r->n, NULL, &r->steal_max_pct);
	}
	if (b->mc_x) {
		munmap(b->mc_x, b->mc_len);
		munmap(b->mc_y, b->mc_len);
		b->mc_x = b->mc_y = NULL;
	}
}

const struct bench_ref *bench_ref_find(const struct bench *b, const char *key)
{
	const struct bench_ref *best = NULL;
	unsigned int i;

	for (i = 0; i < b->nrefs; i++) {
		const struct bench_ref *r = &b->refs[i];

		if (!r->ok || strcmp(r->key, key))
			continue;
		if (!best || r->mbps > best->mbps)
			best = r;
	}
	return best;
}
