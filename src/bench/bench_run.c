// SPDX-License-Identifier: MIT
/*
 * One bench run: a receiver and a sender, each a separate `dnd` process
 * (/proc/self/exe) so CPU is accounted per side, each reporting with
 * --json. Nothing is taken on trust: the byte count and the verdict
 * ("verified" into a file, "counted" into /dev/null) are checked every run.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_json.h"
#include "bench/bench_proc.h"
#include "bench/bench_run.h"
#include "core/io.h"
#include "core/log.h"
#include "core/randfill.h"
#include "xfer/method.h"
#include "cli/opts.h"
#include "core/stats.h"
#include "xfer/xfer.h"

#define BENCH_PORT_LO	20000
#define BENCH_PORT_HI	32000	/* below the usual ephemeral range */
#define BENCH_GRACE	5.0	/* seconds the second child gets */

int bench_make_source(struct bench *b)
{
	int fd, r;

	fd = open(b->src_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1) {
		r = -errno;
		goto out;
	}
	r = randfill_fd(fd, b->src_size);
	/* Synced, so that --cache cold can drop its pages. */
	if (!r && fdatasync(fd) == -1)
		r = -errno;
	close(fd);
out:
	if (r && r != -EINTR)
		log_err("cannot create the source file %s: %s; free some space "
			"or choose another place with --dir", b->src_path,
			strerror(-r));
	return r;
}

static int bench_check_side(const struct dnd_method *m, bool sender,
			    enum dnd_ep ep, char *why, size_t len)
{
	const struct xfer_cfg c = {
		.m = m,
		.sender = sender,
		.ep = ep,
		.fmode = ep == DND_EP_FILE ? S_IFREG | 0644 : S_IFCHR | 0666,
	};
	char w[256] = "";
	int r = xfer_check(&c, w, sizeof(w));

	if (r == -EINVAL)
		snprintf(why, len, "%s", w[0] ? w : "the method refuses this");
	else if (r)
		snprintf(why, len, "%s: %s", m->name, w[0] ? w : "unavailable");
	return r ? -1 : 0;
}

void bench_cell_check(const struct bench *b, struct bench_cell *c)
{
	const struct bench_group *g = &b->groups[c->group];
	enum dnd_ep src = g->src == BENCH_SRC_ZERO ? DND_EP_ZERO : DND_EP_FILE;
	enum dnd_ep sink = g->sink == BENCH_SINK_NULL ? DND_EP_NULL :
			   DND_EP_FILE;
	/* --remote: the server checks its own end and refuses with why. */
	bool snd_here = !b->o.remote || !b->o.reverse;
	bool rcv_here = !b->o.remote || b->o.reverse;

	if (!c->snd->send)
		snprintf(c->why, sizeof(c->why), "%s cannot send", c->snd->name);
	else if (!c->rcv->recv)
		snprintf(c->why, sizeof(c->why), "%s cannot receive",
			 c->rcv->name);
	/* --key: TLS in user space takes the methods that bring the bytes
	 * there (the server applies the same rule to its end). */
	else if (b->o.key &&
		 (method_keyed(c->snd, "-m", c->why, sizeof(c->why)) ||
		  method_keyed(c->rcv, "-m", c->why, sizeof(c->why))))
		;
	else if ((!snd_here || !bench_check_side(c->snd, true, src, c->why,
						  sizeof(c->why))) &&
		 (!rcv_here || !bench_check_side(c->rcv, false, sink, c->why,
						  sizeof(c->why))))
		return;
	c->state = BENCH_NA;
}

/* Loopback: a port free right now on the bind address (the receiver binds
 * it a moment later; a loser of that race is retried). A fresh namespace
 * has no other users. */
unsigned int bench_port(struct bench *b)
{
	unsigned int tries, p = b->port_next;

	for (tries = 0; tries < 400; tries++) {
		struct sockaddr_in sa = { .sin_family = AF_INET };
		int fd, one = 1, ok;

		p = b->port_next++;
		if (b->port_next >= BENCH_PORT_HI)
			b->port_next = BENCH_PORT_LO;
		if (b->ns_made)
			return p;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1)
			return p;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sa.sin_port = htons((uint16_t)p);
		inet_pton(AF_INET, b->bind, &sa.sin_addr);
		ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(fd);
		if (ok)
			return p;
	}
	return p;
}

double bench_deadline(const struct bench *b, uint64_t size)
{
	double t = 20.0 + (double)size / 50e6;

	if (b->o.rate_bps)
		t += 3.0 * (double)size / (double)b->o.rate_bps;
	return t;
}

void bench_drop_caches(struct bench *b)
{
	int fd;

	if (b->cold_failed)
		return;
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd != -1 && write(fd, "3\n", 2) == 2) {
		close(fd);
		return;
	}
	snprintf(b->cache_note, sizeof(b->cache_note),
		 "cold cache not possible (writing /proc/sys/vm/drop_caches: "
		 "%s); file-source runs were warm", strerror(errno));
	if (fd != -1)
		close(fd);
	b->cold_failed = true;
	log_warn("%s; run as root for --cache cold", b->cache_note);
}

/* Sums syscalls.KIND.calls of a dnd report (its keys under pre). */
static double bench_calls(const struct bjson *j, const char *pre)
{
	size_t i, p = strlen(pre);
	double sum = 0;

	for (i = 0; i < j->n; i++) {
		const char *k = bjson_key(j, i);
		size_t n = strlen(k);

		if (strncmp(k, pre, p) || strchr(k + p, '.') == NULL)
			continue;
		k += p;
		n -= p;
		if (!strncmp(k, "syscalls.", 9) && n > 15 &&
		    !strcmp(k + n - 6, ".calls") && j->ent[i].type == BJSON_NUM)
			sum += j->ent[i].num;
	}
	return sum;
}

/* The numbers of one report (its keys under pre) into s; 0 or -1. */
static int bench_report_read(const struct bjson *j, const char *pre,
			     struct bench_side *s, char *why, size_t len)
{
	char k[10][64];
	const char *names[10] = { "mb_per_s", "seconds", "cpu_user_seconds",
				  "cpu_sys_seconds", "bytes", "verdict",
				  "cpu_us_per_mb", "machine_busy_pct",
				  "machine_steal_pct", "total_seconds" };
	const char *v;
	double bytes = 0, total = 0;
	int i;

	for (i = 0; i < 10; i++)
		snprintf(k[i], sizeof(k[i]), "%s%s", pre, names[i]);
	v = bjson_str(j, k[5]);
	if (!bjson_num(j, k[0], &s->mbps) || !bjson_num(j, k[1], &s->seconds) ||
	    !bjson_num(j, k[2], &s->user) || !bjson_num(j, k[3], &s->sys) ||
	    !bjson_num(j, k[4], &bytes) || !v) {
		snprintf(why, len, "the --json report lacks a field bench needs%s",
			 pre[0] ? " in the server's peer_report" : "");
		return -1;
	}
	s->bytes = (uint64_t)bytes;
	snprintf(s->verdict, sizeof(s->verdict), "%s", v);
	bjson_num(j, k[6], &s->usec_per_mb);
	bjson_num(j, k[7], &s->busy_pct);
	bjson_num(j, k[8], &s->steal_pct);
	if (bjson_num(j, k[9], &total) && total > 0)
		s->total_mbps = bytes / (total * 1e6);
	s->calls_per_mb = bytes > 0 ? bench_calls(j, pre) / (bytes / 1e6) : 0;
	return 0;
}

/*
 * Reads one child's report into s, and with far (--remote) the server's
 * report of the same transfer from its peer_report. 0, or -1 with why.
 */
static int bench_side_read(const struct bench_child *k, struct bench_side *s,
			   struct bench_side *far, char *why, size_t len)
{
	struct bjson j = { 0 };
	char err[256], cw[600];
	const char *e;
	double ok = 0;
	int r = -1;

	memset(s, 0, sizeof(*s));
	if (!k->out_len || bjson_parse(&j, k->out, k->out_len, err, sizeof(err))) {
		snprintf(why, len, "%s%s%s", bench_child_why(k, cw, sizeof(cw)),
			 k->out_len ? "; unreadable --json report: " : "",
			 k->out_len ? err : "");
		return -1;
	}
	e = bjson_str(&j, "error");
	if (!bjson_num(&j, "ok", &ok) || !ok || !bench_child_ok(k)) {
		snprintf(why, len, "%s", e ? e : bench_child_why(k, cw, sizeof(cw)));
		goto out;
	}
	if (bench_report_read(&j, "", s, why, len))
		goto out;
	bjson_num(&j, "tcp.retransmits", &s->retrans);
	if (far && bench_report_read(&j, "peer_report.", far, why, len))
		goto out;
	if (far && !s->retrans)
		bjson_num(&j, "peer_report.tcp.retransmits", &s->retrans);
	r = 0;
out:
	bjson_free(&j);
	return r;
}

/* Builds both command lines into the caller's buffers. */
struct bench_argv {
	char port[8], sbsz[24], rbsz[24], win[24], pipe[24], size[24], np[12];
	char dst[320];
	char *recv[32], *send[32];
};

static void bench_argv_side(char **a, int *k, const char *role,
			    const struct dnd_method *m, struct bench_argv *v,
			    char *bsz, bool pipe)
{
	a[(*k)++] = "/proc/self/exe";
	a[(*k)++] = (char *)role;
	a[(*k)++] = "-p";
	a[(*k)++] = v->port;
	a[(*k)++] = "-m";
	a[(*k)++] = (char *)m->name;
	a[(*k)++] = "-b";
	a[(*k)++] = bsz;
	a[(*k)++] = "-w";
	a[(*k)++] = v->win;
	if (pipe && m->flags & DND_M_PIPE) {
		a[(*k)++] = "--pipe-size";
		a[(*k)++] = v->pipe;
	}
	a[(*k)++] = "--json";
	a[(*k)++] = "--timeout";
	a[(*k)++] = "20";
}

/*
 * --remote: one local child against the dnd serve, into v->send (a push)
 * or v->recv (--reverse, a pull); the server runs the far end's method
 * with a special end: null or scratch for a push, zero or scratch for a
 * pull (never a name).
 */
static void bench_argv_remote(struct bench *b, const struct bench_cell *c,
			      struct bench_argv *v)
{
	const struct bench_group *g = &b->groups[c->group];
	bool pull = b->o.reverse;
	char **a = pull ? v->recv : v->send;
	int k = 0;

	bench_argv_side(a, &k, pull ? "recv" : "send", pull ? c->rcv : c->snd,
			v, pull ? v->rbsz : v->sbsz, g->pipe);
	a[k++] = "-c";
	a[k++] = (char *)b->host;
	a[k++] = "--peer-method";
	a[k++] = (char *)(pull ? c->snd : c->rcv)->name;
	a[k++] = "--peer-end";
	if (pull) {
		a[k++] = g->src == BENCH_SRC_ZERO ? "zero" : "scratch";
		a[k++] = "--peer-size";
		a[k++] = v->size;
	} else {
		a[k++] = g->sink == BENCH_SINK_NULL ? "null" : "scratch";
		a[k++] = "-l";
		a[k++] = v->size;
	}
	if (b->o.key) {
		a[k++] = "--key";
		a[k++] = (char *)b->o.key;
	}
	if (g->streams > 1) {
		snprintf(v->np, sizeof(v->np), "%u", g->streams);
		a[k++] = "-P";
		a[k++] = v->np;
	}
	a[k++] = pull ? v->dst : g->src == BENCH_SRC_ZERO ? "/dev/zero" :
		 b->src_path;
	a[k] = NULL;
}

static void bench_argv(struct bench *b, const struct bench_cell *c,
		       struct bench_argv *v)
{
	const struct bench_group *g = &b->groups[c->group];
	int k = 0;

	snprintf(v->port, sizeof(v->port), "%u", b->o.remote ? b->o.rport :
		 bench_port(b));
	opt_fmt_size(c->sbsz, v->sbsz, sizeof(v->sbsz));
	opt_fmt_size(c->rbsz, v->rbsz, sizeof(v->rbsz));
	opt_fmt_size(b->o.window, v->win, sizeof(v->win));
	opt_fmt_size(g->pipe, v->pipe, sizeof(v->pipe));
	snprintf(v->size, sizeof(v->size), "%llu", (unsigned long long)g->size);
	if (g->sink == BENCH_SINK_NULL)
		snprintf(v->dst, sizeof(v->dst), "/dev/null");
	else
		snprintf(v->dst, sizeof(v->dst), "%s/dst-%u", b->dir, ++b->seq);
	if (b->o.remote) {
		bench_argv_remote(b, c, v);
		return;
	}
	bench_argv_side(v->recv, &k, "recv", c->rcv, v, v->rbsz, g->pipe);
	v->recv[k++] = "--bind";
	v->recv[k++] = (char *)b->bind;
	v->recv[k++] = v->dst;
	v->recv[k] = NULL;
	k = 0;
	bench_argv_side(v->send, &k, "send", c->snd, v, v->sbsz, g->pipe);
	v->send[k++] = "-c";
	v->send[k++] = (char *)b->host;
	/* started beside its receiver: waits for it to listen */
	v->send[k++] = "--connect-timeout";
	v->send[k++] = "10";
	v->send[k++] = "-l";
	v->send[k++] = v->size;
	if (g->streams > 1) {
		snprintf(v->np, sizeof(v->np), "%u", g->streams);
		v->send[k++] = "-P";
		v->send[k++] = v->np;
	}
	v->send[k++] = g->src == BENCH_SRC_ZERO ? "/dev/zero" : b->src_path;
	v->send[k] = NULL;
}

/* Checks what both reports say against what was asked. 0 or -1 + why. */
static int bench_judge(const struct bench *b, const struct bench_cell *c,
		       const struct bench_run *r, char *why, size_t len)
{
	const struct bench_group *g = &b->groups[c->group];
	const char *want = g->sink == BENCH_SINK_FILE ? "verified" : "counted";

	if (r->rcv.bytes != g->size || r->snd.bytes != g->size) {
		snprintf(why, len, "moved %llu bytes (receiver %llu), asked %llu",
			 (unsigned long long)r->snd.bytes,
			 (unsigned long long)r->rcv.bytes,
			 (unsigned long long)g->size);
		return -1;
	}
	if (strcmp(r->rcv.verdict, want) || strcmp(r->snd.verdict, want)) {
		snprintf(why, len, "verdict %s/%s (send/recv), expected %s",
			 r->snd.verdict, r->rcv.verdict, want);
		return -1;
	}
	return 0;
}

/* Starts the cell's children: both ends, or with --remote the local one
 * (k[0]). Returns how many, or -errno. */
static int bench_start(struct bench *b, struct bench_child *k,
		       struct bench_argv *v)
{
	int pin = b->o.pin && b->facts.ncpu > 1, rc;

	if (b->o.remote) {
		rc = bench_spawn(&k[0], b->o.reverse ? v->recv : v->send, NULL,
				 -1);
		return rc ? rc : 1;
	}
	rc = bench_spawn(&k[0], v->recv, b->ns_made ? b->nsp_recv : NULL,
			 pin ? 1 : -1);
	if (!rc)
		rc = bench_spawn(&k[1], v->send, b->ns_made ? b->nsp_send : NULL,
				 pin ? 0 : -1);
	return rc ? rc : 2;
}

/* Both sides' reports into r: two children, or --remote's one child and
 * the server's report inside it. 0 or -EIO with why; *retry on a port
 * race. */
static int bench_read(struct bench *b, const struct bench_child *k,
		      struct bench_run *r, char *why, size_t len, bool *retry)
{
	bool rev = b->o.reverse;
	char w[400];

	if (b->o.remote) {
		if (!bench_side_read(&k[0], rev ? &r->rcv : &r->snd,
				     rev ? &r->snd : &r->rcv, w, sizeof(w)))
			return 0;
		snprintf(why, len, "%s: %s", rev ? "recv --peer-end" :
			 "send --peer-end", w);
		return -EIO;
	}
	if (bench_side_read(&k[0], &r->rcv, NULL, w, sizeof(w))) {
		*retry = strstr(w, "Address already in use") != NULL;
		snprintf(why, len, "recv: %s", w);
		return -EIO;
	}
	if (bench_side_read(&k[1], &r->snd, NULL, w, sizeof(w))) {
		snprintf(why, len, "send: %s", w);
		return -EIO;
	}
	return 0;
}

static int bench_run_once(struct bench *b, const struct bench_cell *c,
			  struct bench_run *r, char *why, size_t len,
			  bool *retry)
{
	const struct bench_group *g = &b->groups[c->group];
	struct bench_child k[2];
	struct bench_argv v;
	struct dnd_sample s0, s1;
	struct dnd_cost cost;
	int rc, n;

	*retry = false;
	memset(k, 0, sizeof(k));
	k[0].fd_out = k[0].fd_err = k[1].fd_out = k[1].fd_err = -1;
	bench_argv(b, c, &v);
	if (g->src == BENCH_SRC_FILE && b->o.cold)
		bench_drop_caches(b);
	stats_sample(&s0);
	n = rc = bench_start(b, k, &v);
	if (rc < 0) {
		snprintf(why, len, "cannot start a child: %s", strerror(-rc));
		goto out;
	}
	rc = bench_wait(k, n, stats_now() + bench_deadline(b, g->size),
			BENCH_GRACE);
	stats_sample(&s1);
	if (rc == -EINTR)
		goto out;
	rc = bench_read(b, k, r, why, len, retry);
	if (!rc && bench_judge(b, c, r, why, len))
		rc = -EIO;
	if (!rc) {
		stats_cost(&s0, &s1, 0, &cost);
		r->busy_run_pct = cost.sys_busy_pct;
		r->steal_run_pct = cost.sys_steal_pct;
	}
	if (rc && k[0].killed + k[1].killed)
		snprintf(why + strlen(why), len - strlen(why),
			 " (killed after %.0f s)", bench_deadline(b, g->size));
out:
	bench_child_free(&k[0]);
	bench_child_free(&k[1]);
	if (g->sink == BENCH_SINK_FILE && (!b->o.remote || b->o.reverse))
		unlink(v.dst);
	return rc;
}

int bench_cell_run(struct bench *b, const struct bench_cell *c,
		   struct bench_run *r, char *why, size_t len)
{
	bool retry = false;
	int rc, attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		memset(r, 0, sizeof(*r));
		rc = bench_run_once(b, c, r, why, len, &retry);
		if (!retry)
			break;
	}
	return rc;
}

/* Median of one field of every run, picked by offset; min and max too. */
static double bench_med_field(const struct bench_cell *c, size_t off,
			      double *lo, double *hi)
{
	double v[BENCH_MAX_REPEAT];
	unsigned int i;

	for (i = 0; i < c->nruns; i++)
		memcpy(&v[i], (const char *)&c->runs[i] + off, sizeof(double));
	return stats_median(v, c->nruns, lo, hi);
}

#define BENCH_MED(c, f) \
	bench_med_field((c), offsetof(struct bench_run, f), NULL, NULL)

void bench_summarize(struct bench_cell *c)
{
	struct bench_sum *s = &c->sum;

	memset(s, 0, sizeof(*s));
	s->n = c->nruns;
	if (!c->nruns)
		return;
	s->mbps = bench_med_field(c, offsetof(struct bench_run, rcv.mbps),
				  &s->mbps_min, &s->mbps_max);
	s->total = bench_med_field(c, offsetof(struct bench_run,
					       rcv.total_mbps),
				   &s->total_min, &s->total_max);
	s->s_user = BENCH_MED(c, snd.user);
	s->s_sys = BENCH_MED(c, snd.sys);
	s->r_user = BENCH_MED(c, rcv.user);
	s->r_sys = BENCH_MED(c, rcv.sys);
	s->s_usmb = BENCH_MED(c, snd.usec_per_mb);
	s->r_usmb = BENCH_MED(c, rcv.usec_per_mb);
	s->s_callsmb = BENCH_MED(c, snd.calls_per_mb);
	s->r_callsmb = BENCH_MED(c, rcv.calls_per_mb);
	s->busy = BENCH_MED(c, rcv.busy_pct);
	s->busy_run = BENCH_MED(c, busy_run_pct);
	s->steal = BENCH_MED(c, rcv.steal_pct);
	s->steal_run = BENCH_MED(c, steal_run_pct);
	s->retrans = BENCH_MED(c, snd.retrans);
}
