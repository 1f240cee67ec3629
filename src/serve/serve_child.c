// SPDX-License-Identifier: MIT
/*
 * One dnd serve session, in its own process: the handshake under its
 * deadline, the request's checks (name confined beneath DIR, method, size,
 * free space, a free session slot), the verdict, then the transfer on the
 * same socket, and one log line for the parent.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"
#include "core/esc.h"
#include "core/io.h"
#include "core/json.h"
#include "core/land.h"
#include "core/log.h"
#include "core/net.h"
#include "core/net_mptcp.h"
#include "core/params.h"
#include "core/proto.h"
#include "core/stats.h"
#include "serve/budget.h"
#include "serve/handshake.h"
#include "serve/serve.h"
#include "serve/serve_end.h"
#include "xfer/method.h"
#include "xfer/report.h"
#include "xfer/session.h"
#include "xfer/xfer.h"


struct child {
	const struct serve_ctx *c;
	const char *peer;
	int fd;
	double deadline;
	struct serve_params p;	/* p.bsz: as granted */
	bool have_p;
	struct budget_grant grant;	/* --max-buffer, --max-memory */
	const struct dnd_method *m;
	int dfd, rfd;		/* push: the name's parent; pull: the file */
	int lfd;		/* N > 1 streams: where streams 1.. come */
	int slot;		/* ours in c->slots, or -1 */
	uint16_t port;		/* lfd's */
	char base[NAME_MAX + 1];
	char path[PATH_MAX + 64];
	struct dnd_result res;
	bool ran;
	char err[512];
};

static void child_log_json(struct child *k, FILE *f)
{
	struct json j;

	json_begin_doc(&j, f, "serve_session");
	json_str(&j, "peer", k->peer);
	json_str(&j, "direction", !k->have_p ? NULL :
		 k->p.op == SERVE_PUSH ? "push" : "pull");
	json_name(&j, "name", k->have_p ? k->p.name : NULL,
		  k->p.name_len);
	json_str(&j, "method", k->have_p ? k->p.method : NULL);
	json_u64(&j, "bytes", k->res.bytes);
	json_f64(&j, "seconds", k->res.timed ? k->res.cost.wall : 0);
	json_str(&j, "verdict", k->err[0] ? "failed" : k->res.verdict);
	json_str(&j, "error", k->err[0] ? k->err : NULL);
	report_json_tls(&j, &k->res);
	json_end(&j);
}

/* The tally for the parent's counters, then the line: one write. */
static void child_log_send(const struct child *k, int logfd,
			   const char *line)
{
	struct serve_tally t = {
		.bytes = k->res.bytes,
		.ok = !k->err[0] && k->ran,
		.pull = k->have_p && k->p.op == SERVE_PULL,
		.ran = k->ran,
	};
	char buf[sizeof(t) + SERVE_LOG_MAX];
	size_t n = strlen(line);

	memcpy(buf, &t, sizeof(t));
	memcpy(buf + sizeof(t), line, n);
	if (write(logfd, buf, sizeof(t) + n) < 0)
		return;
}

/* The session's one log line, through the parent (one write). */
static void child_log(struct child *k, int logfd)
{
	char name[ESC_ROOM(PATH_MAX)], err[ESC_ROOM(sizeof(k->err))];
	char line[SERVE_LOG_MAX];
	FILE *f = fmemopen(line, sizeof(line) - 1, "w");

	if (!f)
		return;
	esc_text(name, sizeof(name), k->p.name, k->p.name_len, ESC_PEER);
	if (!k->err[0] && k->res.error[0])
		snprintf(k->err, sizeof(k->err), "%s", k->res.error);
	/* Messages name the file by the client's name: its bytes too. */
	esc_text(err, sizeof(err), k->err, strlen(k->err), 0);
	if (k->c->o->json) {
		child_log_json(k, f);
	} else {
		fprintf(f, "dnd: session %s", k->peer);
		if (k->have_p)
			fprintf(f, " %s %s -m %s", k->p.op == SERVE_PUSH ?
				"push" : "pull", name, k->p.method);
		fprintf(f, ": %llu bytes in %.3f s, ",
			(unsigned long long)k->res.bytes,
			k->res.timed ? k->res.cost.wall : 0.0);
		if (k->err[0])
			fprintf(f, "failed: %s\n", err);
		else
			fprintf(f, "%s\n", k->res.verdict);
	}
	fflush(f);
	line[ftell(f)] = 0;
	fclose(f);
	child_log_send(k, logfd, line);
}

/* Refuses the request with reason (also the log's). Returns 1. */
static int child_refuse(struct child *k, uint16_t status, const char *reason)
{
	char why[256];

	snprintf(k->err, sizeof(k->err), "refused: %s", reason);
	hs_verdict(k->fd, status, reason, k->deadline, why,
		   sizeof(why));
	return 1;
}

/* --methods allows m (or says nothing); else why lists what it allows. */
static bool child_method_allowed(const struct serve_opts *o,
				 const struct dnd_method *m, char *why,
				 size_t len)
{
	unsigned int i;
	size_t n;

	for (i = 0; i < o->nmethods; i++)
		if (o->methods[i] == m)
			return true;
	if (!o->nmethods)
		return true;
	n = (size_t)snprintf(why, len, "--peer-method %s is not allowed by "
			     "this server; it allows ", m->name);
	for (i = 0; i < o->nmethods && n < len; i++)
		n += (size_t)snprintf(why + n, len - n, "%s%s", i ? ", " : "",
				      o->methods[i]->name);
	return false;
}

/* The method exists, goes this way, is allowed and works on this kernel.
 * 0 or 1. */
static int child_method(struct child *k)
{
	bool pull = k->p.op == SERVE_PULL;
	struct xfer_cfg cfg = {
		.sender = pull,
		.ep = k->p.end == SERVE_END_ZERO ? DND_EP_ZERO :
		      k->p.end == SERVE_END_NULL ? DND_EP_NULL : DND_EP_FILE,
		.fmode = k->p.end == SERVE_END_ZERO ||
			 k->p.end == SERVE_END_NULL ? S_IFCHR : S_IFREG,
		.bsz = k->p.bsz,
	};
	char why[256], reason[320];

	k->m = method_find(k->p.method);
	if (!k->m) {
		snprintf(reason, sizeof(reason), "no method '%s' here (dnd "
			 "probe lists them)", k->p.method);
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	}
	if (pull ? !k->m->send : !k->m->recv) {
		snprintf(reason, sizeof(reason), "--peer-method %s cannot %s",
			 k->m->name, pull ? "send" : "receive");
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	}
	if (!child_method_allowed(k->c->o, k->m, reason, sizeof(reason)))
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	if (net_mptcp_active(k->fd) && method_mptcp(k->m, pull, "--peer-method",
						    reason, sizeof(reason)))
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	if (k->c->keyed && method_keyed(k->m, "--peer-method", reason,
					sizeof(reason)))
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	if (budget_fit(k->m, k->p.streams, k->p.bsz, k->c->o->max_buffer,
		       k->c->o->max_memory, &k->grant, reason, sizeof(reason)))
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	k->p.bsz = cfg.bsz = k->grant.bsz;
	cfg.m = k->m;
	if (xfer_check(&cfg, why, sizeof(why))) {
		snprintf(reason, sizeof(reason), "--peer-method %s is not "
			 "usable on the server: %s", k->m->name, why);
		return child_refuse(k, SERVE_ST_REFUSED, reason);
	}
	return 0;
}

/* A push: the name's parent beneath DIR, the size against the limits. */
static int child_push(struct child *k)
{
	const struct serve_opts *o = k->c->o;
	struct dnd_confined t;
	const char *slash = memrchr(k->p.name, '/', k->p.name_len);
	uint64_t avail;
	char why[320], name[204], where[sizeof(name) + 32];

	if (confine_resolve(&k->c->dir, k->p.name, k->p.name_len, &t, why,
			    sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	k->dfd = t.dirfd;
	snprintf(k->base, sizeof(k->base), "%s", t.base);
	if (land_check_name(t.base, why, sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	if (t.exists && !o->replace) {
		esc_text(name, sizeof(name), k->p.name, k->p.name_len,
			 ESC_PEER);
		snprintf(why, sizeof(why), "%s exists on the server, which "
			 "runs without --replace", name);
		return child_refuse(k, SERVE_ST_REFUSED, why);
	}
	if (o->max_bytes && !(k->p.flags & SERVE_PF_KNOWN))
		return child_refuse(k, SERVE_ST_REFUSED, "the length is not "
				    "known in advance and the server has "
				    "--max-bytes; send with -l SIZE");
	if (o->max_bytes && k->p.length > o->max_bytes) {
		snprintf(why, sizeof(why), "%llu bytes is above the server's "
			 "--max-bytes %llu", (unsigned long long)k->p.length,
			 (unsigned long long)o->max_bytes);
		return child_refuse(k, SERVE_ST_REFUSED, why);
	}
	/* The space where it lands: a smaller filesystem may be mounted
	 * under DIR. */
	snprintf(where, sizeof(where), "the served directory");
	if (slash) {
		esc_text(name, sizeof(name), k->p.name, slash - k->p.name,
			 ESC_PEER);
		snprintf(where, sizeof(where), "'%s' in the served directory",
			 name);
	}
	if (confine_space(t.dirfd, where, k->p.length, &avail, why,
			  sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	snprintf(k->path, sizeof(k->path), "/proc/self/fd/%d/%s", k->dfd,
		 k->base);
	return 0;
}

static int child_pull(struct child *k)
{
	char why[320];

	if (confine_open_read(&k->c->dir, k->p.name, k->p.name_len, &k->rfd,
			      why, sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	snprintf(k->path, sizeof(k->path), "/proc/self/fd/%d", k->rfd);
	return 0;
}

/*
 * A special end (params.h): /dev/zero, /dev/null or a scratch file that
 * the server names or makes itself; the client names no path. 0 or 1.
 */
static int child_special(struct child *k)
{
	bool pull = k->p.op == SERVE_PULL;
	uint64_t max = k->c->o->max_bytes;
	char why[320];
	int n;

	if (max && k->p.length > max) {
		snprintf(why, sizeof(why), "%llu bytes is above the server's "
			 "--max-bytes %llu", (unsigned long long)k->p.length,
			 (unsigned long long)max);
		return child_refuse(k, SERVE_ST_REFUSED, why);
	}
	if (k->p.end == SERVE_END_SCRATCH && !pull) {
		n = serve_scratch_name(k->p.name, sizeof(k->p.name));
		if (n < 0)
			return child_refuse(k, SERVE_ST_REFUSED, "no random "
					    "scratch name");
		k->p.name_len = (size_t)n;
		return child_push(k);
	}
	k->p.name_len = (size_t)snprintf(k->p.name, sizeof(k->p.name), "(%s)",
					 params_end_name(k->p.end));
	if (k->p.end != SERVE_END_SCRATCH) {
		snprintf(k->path, sizeof(k->path), pull ? "/dev/zero" :
			 "/dev/null");
		return 0;
	}
	if (serve_scratch_fill(&k->c->dir, k->p.length, &k->rfd, why,
			       sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	snprintf(k->path, sizeof(k->path), "/proc/self/fd/%d", k->rfd);
	return 0;
}

/* Takes a free session slot (the parent frees it when we are reaped). */
static bool child_claim(struct child *k)
{
	const struct serve_ctx *c = k->c;
	pid_t me = getpid(), free_slot;
	unsigned int i;

	for (i = 0; i < c->o->max_sessions; i++) {
		free_slot = 0;
		if (__atomic_compare_exchange_n(&c->slots[i], &free_slot, me,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST)) {
			k->slot = (int)i;
			return true;
		}
	}
	return false;
}

/* The push's temporary file is open: the parent removes it if we die. */
static void child_landing(struct session_link *l, int fd, const char *tmp)
{
	struct child *k = l->arg;

	if (k->slot >= 0)
		litter_note(&k->c->litter[k->slot], k->p.name, k->p.name_len,
			    fd, tmp);
}

/*
 * After a failed handshake: our last bytes (a preamble that names the
 * mismatch) must reach the client, and closing with its unread bytes in
 * our queue would reset the connection and drop them. So: FIN, then read
 * and discard what it still sends, for a second at most.
 */
static void child_linger(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	double end = stats_now() + 1;
	char buf[4096];
	int n = 0;

	shutdown(fd, SHUT_WR);
	while (n++ < 64 && poll(&p, 1, (int)((end - stats_now()) * 1000)) > 0)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
}

/*
 * N > 1 streams: a listener of the session's own on the address the
 * client reached (so keyless, it stays on loopback), its backlog room for
 * every stream at once. 0 or 1 (refused).
 */
static int child_listen(struct child *k)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[NI_MAXHOST], err[320], why[400];

	if (getsockname(k->fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), NULL,
			0, NI_NUMERICHOST))
		return child_refuse(k, SERVE_ST_REFUSED, "cannot name the "
				    "address for the other streams");
	net_use_mptcp(k->c->o->mptcp);
	k->lfd = net_listen(host, 0, (int)k->c->o->window,
			    k->p.op == SERVE_PULL, err, sizeof(err));
	sl = sizeof(ss);
	if (k->lfd >= 0 && (listen(k->lfd, DND_STREAMS_MAX) ||
			    getsockname(k->lfd, (struct sockaddr *)&ss, &sl)))
		snprintf(err, sizeof(err), "%s", strerror(errno));
	else if (k->lfd >= 0)
		k->port = ntohs(ss.ss_family == AF_INET6 ?
				((struct sockaddr_in6 *)&ss)->sin6_port :
				((struct sockaddr_in *)&ss)->sin_port);
	if (k->port)
		return 0;
	snprintf(why, sizeof(why), "no port for the other streams: %s", err);
	return child_refuse(k, SERVE_ST_REFUSED, why);
}

/* After the verdict: where the other streams go. 0 or 1. */
static int child_port(struct child *k)
{
	uint8_t b[DND_PORT_LEN];
	int r;

	proto_put_port(b, k->port);
	r = hello_send_by(k->fd, b, sizeof(b), k->deadline);
	if (r)
		snprintf(k->err, sizeof(k->err), "streams message: %s",
			 strerror(-r));
	return !!r;
}

/* Handshake, request, verdict. 0 when the transfer may start. */
static int child_admit(struct child *k)
{
	const struct serve_ctx *c = k->c;
	struct dnd_hs_cfg cfg = {
		.tls = c->keyed ? &c->tls : NULL,
		.version = DND_WIRE_VERSION,
		.deadline = k->deadline,
	};
	uint8_t params[DND_WIRE_PARAMS_MAX];
	size_t n = 0;
	char why[512];

	if (hs_server(k->fd, &cfg, params, &n, k->err, sizeof(k->err))) {
		child_linger(k->fd);
		return 1;
	}
	if (params_get(params, n, &k->p, why, sizeof(why)))
		return child_refuse(k, SERVE_ST_REFUSED, why);
	k->have_p = true;
	if (child_method(k) || (k->p.end != SERVE_END_NAME ? child_special(k) :
				k->p.op == SERVE_PUSH ? child_push(k) :
				child_pull(k)))
		return 1;
	if (!child_claim(k)) {
		snprintf(why, sizeof(why), "server busy: %u sessions are "
			 "running (--max-sessions); try again later",
			 c->o->max_sessions);
		return child_refuse(k, SERVE_ST_BUSY, why);
	}
	if (!budget_claim(c->mem, c->o->max_sessions, (unsigned int)k->slot,
			  k->grant.demand, c->o->max_memory)) {
		char a[32], b[32];

		snprintf(why, sizeof(why), "server busy: its --max-memory %s "
			 "is held by the sessions running (this one needs %s); "
			 "try again later",
			 opt_fmt_size(c->o->max_memory, a, sizeof(a)),
			 opt_fmt_size(k->grant.demand, b, sizeof(b)));
		return child_refuse(k, SERVE_ST_BUSY, why);
	}
	if (k->p.streams > 1 && child_listen(k))
		return 1;
	if (hs_verdict(k->fd, 0, "", k->deadline, k->err,
		       sizeof(k->err)))
		return 1;
	return k->p.streams > 1 ? child_port(k) : 0;
}

/* --allow on the session's streams port too. */
static bool child_allowed(const struct session_link *l,
			  const struct sockaddr *sa, socklen_t sl)
{
	const struct child *k = l->arg;

	return cidr_match(&k->c->o->allow, sa, sl);
}

/* The transfer itself, as one-shot dnd does it, on this socket. */
static int child_transfer(struct child *k)
{
	const struct serve_opts *o = k->c->o;
	struct session_link l = {
		.server = true,
		.sock = k->fd,
		.lfd = k->lfd,
		.allowed = o->has_allow ? child_allowed : NULL,
		.max_bytes = o->max_bytes,
		.known = k->p.flags & SERVE_PF_KNOWN,
		.length = k->p.length,
		.capped = k->grant.capped[0] ? k->grant.capped : NULL,
		.asked_bsz = k->grant.asked,
		.label = k->p.name,
		.res = &k->res,
		.landing = child_landing,
		.arg = k,
	};
	struct session_opts so = {
		.sender = k->p.op == SERVE_PULL,
		.file = k->path,
		.m = k->m,
		.bsz = k->p.bsz,
		.window = o->window,
		.window_from = o->window_from,
		.rate = o->rate,
		.congestion = o->congestion,
		.mptcp = o->mptcp,
		.splice_flags = SPLICE_F_MOVE,
		.truncate = o->replace,
		.verify = k->p.flags & SERVE_PF_VERIFY,
		.sparse = true,
		.timeout = o->timeout,
		.streams = k->p.streams,
		.link = &l,
		.tls = k->c->keyed ? &k->c->tls : NULL,
		.has_limit = k->p.end == SERVE_END_ZERO,
		.limit = k->p.length,
	};
	int code;

	k->fd = k->lfd = -1;	/* the session owns them now */
	code = session_run(&so);
	k->ran = true;
	/* A pushed scratch file has served its purpose once verified. */
	if (k->p.end == SERVE_END_SCRATCH && k->dfd >= 0)
		unlinkat(k->dfd, k->base, 0);
	if (k->slot >= 0)
		litter_clear(&k->c->litter[k->slot]);
	return code;
}

void serve_child(const struct serve_ctx *c, int fd, const char *peer,
		 int logfd)
{
	struct child *k = calloc(1, sizeof(*k));
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC), code = 1;

	/* Messages go into the one log line, not to the server's stderr
	 * or its --log FILE (the parent's to write). */
	if (null >= 0 && null != 2) {
		dup2(null, 2);
		close(null);
	}
	log_to(NULL, false);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	io_install_signals();
	if (!k)
		_exit(1);
	k->c = c;
	k->peer = peer;
	k->fd = fd;
	k->dfd = k->rfd = k->lfd = k->slot = -1;
	k->deadline = stats_now() + DND_HS_TIMEOUT;
	k->res.verdict = "failed";
	/* A backstop under the handshake's own deadline. */
	alarm((unsigned int)DND_HS_TIMEOUT + 2);
	if (!child_admit(k)) {
		alarm(0);
		code = child_transfer(k);
	}
	child_log(k, logfd);
	_exit(code);
}
