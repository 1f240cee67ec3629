// SPDX-License-Identifier: MIT
/*
 * One transfer end (see session.h and proto.h): its file end, the driver,
 * the report. The dialogues live in session_send.c and session_recv.c.
 * Timing follows the 2006 program: the sender's clock runs from just before the
 * first byte is read until just after the last is sent; the receiver's
 * from just before the first payload byte is received until just after the
 * last is synced to disk. The driver (xfer.c) times that window; hashing,
 * landing and the reply happen outside it. The total, what a user waits,
 * runs from the same start to the receiver's confirmation (sender) or to
 * the verified file's rename and directory fsync (receiver; without a file,
 * its verdict). All framing is proto.c's.
 */
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/net_mptcp.h"
#include "core/pipe.h"
#include "core/tls.h"
#include "xfer/method.h"
#include "xfer/session_link.h"
#include "xfer/session_types.h"

int session_exit(struct session *s, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->res.error[0])
		return code;
	va_start(ap, fmt);
	vsnprintf(s->res.error, sizeof(s->res.error), fmt, ap);
	va_end(ap);
	log_err("%s", s->res.error);
	return code;
}

/* Opens the file end and fills the driver's settings from it. 0 or 2. */
static int session_open_end(struct session *s)
{
	const struct session_opts *o = s->o;
	char err[320];
	int r;

	/* --time: /dev/zero with no length (checked below) */
	r = o->sender ? endpoint_source(&s->end, o->file,
					o->has_limit || o->seconds > 0,
					o->limit, err, sizeof(err)) :
			endpoint_sink(&s->end, o->file, o->overwrite,
				      o->truncate, err, sizeof(err));
	if (r)
		return session_usage(s, "%s", err);
	if (o->seconds > 0 && s->end.ep != DND_EP_ZERO)
		return session_usage(s, "--time sends /dev/zero for a while; "
				     "give /dev/zero as FILE (a file is sent "
				     "whole, or its first -l SIZE bytes)");
	if (o->seconds > 0) {
		/* No length in advance: segments until the time is up. */
		s->end.known = false;
		s->end.ep = DND_EP_STREAM;
	}
	if (o->streams > 1 && o->raw)
		return session_usage(s, "--raw has no framing to tell streams "
				     "apart; use -P 1");
	/* Each stream reads its own range: a source read once, as it comes,
	 * would hand them its bytes in whatever order they asked (with -l
	 * too), and the receiver's verdict would only catch it. */
	if (o->sender && o->streams > 1 && s->end.ep == DND_EP_STREAM)
		return session_usage(s, "%s is read once, as it comes (a pipe, "
				     "FIFO, socket or device), so it cannot be "
				     "split over %u streams; use -P 1",
				     o->file, o->streams);
	s->cfg = (struct xfer_cfg){
		.m = o->m,
		.sender = o->sender,
		.ep = s->end.ep,
		.fmode = s->end.fmode,
		.bsz = o->bsz,
		.pipe_size = o->pipe_size,
		.splice_flags = o->splice_flags,
		.qd = o->qd,
		.sync_every = o->sync_every,
		.seconds = o->seconds,
		.progress = isatty(1) && isatty(2) && !o->quiet &&
			    !o->json && !o->json_stream && !o->interval,
		.hash_stream = o->sender && s->end.ep == DND_EP_STREAM &&
			       o->verify && !o->raw,
		.direct = o->direct,
		.path = o->file,
	};
	return 0;
}

/* Method against the file end, and against this kernel. 0, 1 or 2. */
static int session_check_method(struct session *s)
{
	char why[256] = "";
	int r = xfer_check(&s->cfg, why, sizeof(why));

	if (r == -EINVAL)
		return session_usage(s, "%s", why);
	if (r)
		return session_fail(s, "%s is not usable here: %s",
				    s->o->m->name, why);
	return 0;
}

/* Turns the transfer's first failure into a message naming the cause. */
static int session_xfer_failed(struct session *s)
{
	const struct dnd_xfer *x = xfer_failed(&s->t);
	unsigned long long done = xfer_done(&s->t);
	const char *f = session_name(s);
	struct xfer_out out;

	/* Bytes a method had read into a buffer count as arrived. */
	xfer_totals(&s->t, &out);
	done += out.held;
	if (!x)
		return session_fail(s, "the transfer failed after %llu bytes",
				    done);
	/* TLS says more than its -errno: a record that failed its check,
	 * a cut before close_notify. */
	if (x->err != -EPIPE && x->err != -ECONNRESET && x->err != -EINTR &&
	    chan_err(x->sock)[0])
		return session_fail(s, "%s after %llu bytes", chan_err(x->sock),
				    done);
	switch (-x->err) {
	case ENODATA:
		if (s->o->sender)
			return session_fail(s, "short source: %s ended after "
					    "%llu of %llu bytes", f, done,
					    (unsigned long long)s->end.len);
		if (!s->end.known)
			return session_fail(s, "short transfer: the sender "
					    "closed the connection after %llu "
					    "bytes without ending the stream "
					    "(it failed or was stopped)", done);
		return session_fail(s, "short transfer: the sender closed the "
				    "connection after %llu of %llu bytes (it "
				    "failed or was stopped)", done,
				    (unsigned long long)s->end.len);
	case EAGAIN:
	case ETIMEDOUT:
		return session_fail(s, "no progress for %g s after %llu bytes; "
				    "the peer stalled (--timeout)",
				    s->o->timeout, done);
	case EINTR:
		return session_fail(s, "interrupted by %s after %llu bytes",
				    strsignal(io_stop_signal), done);
	case EPIPE:
		if (!s->o->sender)
			return session_fail(s, "the reader of %s went away "
					    "after %llu bytes (broken pipe)", f,
					    done);
		/* fall through */
	case ECONNRESET:
		if (s->o->sender && session_send_heard(s))
			return 1;
		/* A reset carries no sender: the peer's (one that failed
		 * closes with data unread) looks like a middlebox's. A
		 * server's reason came in its reply if it had one (above):
		 * its message is out of the client's sight. */
		if (s->o->link && !s->o->link->server)
			return session_fail(s, "the connection was reset after "
					    "%llu bytes: by the server, which "
					    "sent no reason, or by something "
					    "on the path", done);
		return session_fail(s, "the connection was reset after %llu "
				    "bytes: by the %s (see its message) or by "
				    "something on the path", done,
				    s->o->sender ? "receiver" : "sender");
	case ENOSPC:
	case EDQUOT:
		return session_fail(s, "disk full writing %s after %llu bytes "
				    "(%s)", f, done, strerror(-x->err));
	case EBADMSG:
		return session_fail(s, "malformed stream from the peer: %s",
				    x->err_op);
	}
	return session_fail(s, "%s failed after %llu bytes: %s", x->err_op,
			    done, strerror(-x->err));
}

void session_split(struct session *s, uint64_t length)
{
	uint64_t left = length - s->start, chunk, at = s->start;
	unsigned int i;

	/* Ranges in whole MiB (page- and block-aligned for every method);
	 * the last one takes the rest. */
	chunk = left / s->n / (1u << 20) * (1u << 20);
	for (i = 0; i < s->n; i++) {
		s->join[i] = (struct dnd_join){
			.index = (uint16_t)i,
			.streams = (uint16_t)s->n,
			.xfer_id = s->xfer_id,
			.offset = at,
			.len = i + 1 < s->n ? chunk : length - at,
		};
		at += s->join[i].len;
	}
}

int session_stream_fd(struct session *s, unsigned int i)
{
	const struct endpoint *e = &s->end;
	off_t at = e->start + (off_t)s->join[i].offset;
	char path[64];

	if (i == 0) {
		s->fd[0] = e->fd;
	} else if (e->ep == DND_EP_NULL) {
		/* /dev/null keeps no offset: the same description will do. */
		s->fd[i] = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
		if (s->fd[i] == -1)
			return session_fail(s, "dup: %s", strerror(errno));
		return 0;
	} else {
		/* A file description of its own: every method may then read
		 * or write at the description's offset. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", e->fd);
		s->fd[i] = open(path, (s->o->sender ? O_RDONLY : O_RDWR) |
				O_CLOEXEC);
		if (s->fd[i] == -1)
			return session_fail(s, "cannot open %s again for "
					    "stream %u: %s", session_name(s), i,
					    strerror(errno));
	}
	if (e->ep == DND_EP_FILE && lseek(s->fd[i], at, SEEK_SET) == -1)
		return session_fail(s, "cannot seek %s to %lld: %s",
				    session_name(s), (long long)at,
				    strerror(errno));
	return 0;
}

/* --rate, split evenly over the streams, on the sender's; -C on every
 * stream of both ends. 0 or 1. */
static int session_pace(struct session *s)
{
	const struct session_opts *o = s->o;
	uint64_t each = o->sender ? o->rate / s->n : 0;
	unsigned int i;
	int r;

	for (i = 0; i < s->n; i++) {
		r = net_pace(s->sock[i], each);
		if (r)
			return session_fail(s, "--rate: SO_MAX_PACING_RATE on "
					    "stream %u: %s", i, strerror(-r));
		r = net_congestion(s->sock[i], o->congestion);
		if (r)
			return session_fail(s, "-C %s on stream %u: %s",
					    o->congestion, i, strerror(-r));
	}
	return 0;
}

int session_setup_method(struct session *s)
{
	const struct session_opts *o = s->o;
	const struct endpoint *e = &s->end;
	enum xfer_frame frame = XFER_LENGTH;
	unsigned int i;
	int r;

	if (o->raw && (!o->sender || !e->known))
		frame = XFER_UNTIL_EOF;
	else if (!e->known)
		frame = XFER_SEGMENTS;
	r = xfer_open(&s->t, &s->cfg, s->n);
	if (r)
		return session_fail(s, "cannot start the transfer: %s",
				    strerror(-r));
	if (session_pace(s))
		return 1;
	for (i = 0; i < s->n; i++) {
		const struct dnd_join *j = &s->join[i];

		xfer_stream(&s->t, i, s->sock[i], s->fd[i],
			    e->start + (off_t)j->offset, frame, j->len);
		s->t.st[i].last = j->offset + j->len ==
				  s->join[s->n - 1].offset + s->join[s->n - 1].len;
	}
	s->t.length = e->known ? e->len - s->start : UINT64_MAX;
	s->t.sparse = s->sparse;
	s->t.ext = s->ext;
	s->t.n_ext = s->n_ext;
	s->t.ext_base = e->start;
	s->t.punch = !o->sender && s->land.in_place;
	s->t.st[0].hash = s->hash;
	for (i = 0; s->range_st[0] && i < s->n; i++)
		s->t.st[i].hash = s->range_st[i];
	s->t.interval = o->interval;
	/* --json: stdout stays one document, the intervals inside it. */
	s->t.on_interval = o->json_stream ? report_interval_json :
			   o->json ? report_interval_keep :
				     report_interval_text;
	s->t.interval_arg = o->json && !o->json_stream ? (void *)&s->res :
							  (void *)s->out;
	r = xfer_setup(&s->t);
	xfer_unready();
	if (r) {
		if (r == -EPERM && o->pipe_size)
			return session_fail(s, "--pipe-size %u refused by the "
					    "kernel (EPERM: above "
					    "/proc/sys/fs/pipe-max-size %u "
					    "without CAP_SYS_RESOURCE)",
					    o->pipe_size, pipe_max_size());
		return session_xfer_failed(s);
	}
	return 0;
}

void session_total(struct session *s, const char *end)
{
	s->res.total_seconds = stats_now() - s->t_begin;
	s->res.total_end = end;
}

int session_stopped(struct session *s)
{
	if (!io_stop_signal)
		return 0;
	return session_fail(s, "interrupted by %s after %llu bytes",
			    strsignal(io_stop_signal),
			    (unsigned long long)xfer_done(&s->t));
}

int session_payload(struct session *s)
{
	int r;

	/* What a user timing the command sees, from the first byte. */
	s->t_begin = stats_now();
	r = xfer_run(&s->t);

	s->res.cost = s->t.cost;
	s->res.timed = s->t.timed;
	return r ? session_xfer_failed(s) : 0;
}

/* Stream 0's TLS failure in why, named as this mode names the ends; NULL
 * when there is none: TLS says more than its -errno. */
static const char *session_tls_why(const struct session *s, int r, char *why,
				   size_t len)
{
	const char *e = s->sock[0] >= 0 ? chan_err(s->sock[0]) : "";

	if (r == -EINTR || r == -EAGAIN || !e[0])
		return NULL;
	snprintf(why, len, "%s", e);
	session_tls_words(s, why, len);
	return why;
}

int session_sent(struct session *s, int r, const char *what)
{
	char buf[320];
	const char *tls = session_tls_why(s, r, buf, sizeof(buf));

	/* The peer refused this end's certificate: that is the whole story. */
	if (tls && r == -EACCES)
		return session_fail(s, "%s", tls);
	if (r && tls)
		return session_fail(s, "cannot send the %s: %s", what, tls);
	return r ? session_fail(s, "cannot send the %s: %s", what,
				strerror(-r)) : 0;
}

int session_recv_failed(struct session *s, int r, const char *what,
			double secs)
{
	char buf[320];
	const char *tls = session_tls_why(s, r, buf, sizeof(buf));

	if (tls && r == -EACCES)
		return session_fail(s, "%s", tls);
	if (tls)
		return session_fail(s, "%s (waiting for the %s)", tls, what);
	if (r == -ENODATA)
		return session_fail(s, "the peer closed the connection before "
				    "the %s", what);
	if (r == -EINTR && io_stop_signal)
		return session_fail(s, "interrupted by %s while waiting for "
				    "the %s", strsignal(io_stop_signal), what);
	if (r == -EAGAIN)
		return session_fail(s, "no %s within %.0f s (--timeout)", what,
				    secs);
	return session_fail(s, "cannot read the %s: %s", what, strerror(-r));
}

static void *session_hash_run(void *arg)
{
	struct session_hash_job *h = arg;

	h->err = hash_fd_until(h->fd, h->off, h->len, h->direct, &h->stop,
			       &h->hash);
	return NULL;
}

void session_hash_start(struct session *s, int fd, off_t off, uint64_t len,
			bool direct)
{
	struct session_hash_job *h = &s->hjob;

	h->fd = fd;
	h->off = off;
	h->len = len;
	h->direct = direct;
	atomic_store(&h->stop, false);
	/* Signals stay with the main thread; hash_fd sees io_stop_signal. */
	h->running = !io_thread_start(&h->tid, session_hash_run, h);
}

void session_hash_join(struct session *s)
{
	if (s->hjob.running)
		pthread_join(s->hjob.tid, NULL);
	s->hjob.running = false;
}

void session_hash_cancel(struct session *s)
{
	atomic_store(&s->hjob.stop, true);
	session_hash_join(s);
}

int session_hash_get(struct session *s, int fd, off_t off, uint64_t len,
		     bool direct, uint64_t *hash)
{
	struct session_hash_job *h = &s->hjob;
	bool ran = h->running;

	session_hash_join(s);
	if (!ran || h->fd != fd || h->off != off || h->len != len ||
	    h->direct != direct)
		return hash_fd_until(fd, off, len, direct, NULL, hash);
	*hash = h->hash;
	return h->err;
}

double session_hash_wait(const struct session *s, uint64_t n)
{
	return s->o->timeout ? s->o->timeout + (double)n / 5e7 : 0;
}

void session_verdict(struct session *s, const struct dnd_end *mine,
		     const struct dnd_end *theirs)
{
	s->res.hash_valid = mine->flags & theirs->flags & DND_TF_HASH;
	s->res.hash = s->res.hash_valid ? mine->hash : 0;
	s->res.verdict = s->res.hash_valid ? "verified" : "counted";
}

void session_unchecked(struct session *s)
{
	s->res.verdict = "unchecked";
	snprintf(s->res.detail, sizeof(s->res.detail),
		 "--raw: no framing, nothing verified");
}

/* Each stream's share, when there are several. */
static void session_fill_streams(struct session *s)
{
	struct dnd_result *r = &s->res;
	unsigned int i;

	r->nstreams = s->t.st ? s->t.n : 0;
	for (i = 0; i < r->nstreams && r->nstreams > 1; i++) {
		const struct dnd_xfer *x = &s->t.st[i];
		struct tcp_info ti;

		r->st[i].offset = s->join[i].offset;
		r->st[i].bytes = x->done;
		r->st[i].seconds = x->t_end > x->t_begin ?
				   x->t_end - x->t_begin : 0;
		r->st[i].retrans = net_tcp_info(x->sock, &ti) == 0 ?
				   ti.tcpi_total_retrans : 0;
	}
}

static void session_subflow_addr(const struct sockaddr_storage *ss,
				 char *out, size_t len)
{
	if (ss->ss_family)
		net_addr_str((const struct sockaddr *)ss, sizeof(*ss), out,
			     len);
	else
		snprintf(out, len, "?");
}

/* --mptcp: which streams kept MPTCP, and their subflows, read before the
 * sockets close (a subflow's counters go with it). */
static void session_fill_mptcp(struct session *s)
{
	struct dnd_result *r = &s->res;
	const unsigned int max = sizeof(r->mptcp.sub) / sizeof(r->mptcp.sub[0]);
	struct net_subflow sf[sizeof(r->mptcp.sub) / sizeof(r->mptcp.sub[0])];
	unsigned int i, j;
	int n;

	r->mptcp.on = s->o->mptcp;
	for (i = 0; r->mptcp.on && i < s->n; i++) {
		if (s->sock[i] < 0)
			continue;
		if (!net_mptcp_active(s->sock[i])) {
			r->mptcp.fallback++;
			continue;
		}
		n = net_mptcp_subflows(s->sock[i], sf, max - r->mptcp.nsub);
		if (n <= 0)
			continue;
		r->mptcp.total += (unsigned int)n;
		for (j = 0; j < (unsigned int)n && r->mptcp.nsub < max; j++) {
			struct dnd_subflow *u = &r->mptcp.sub[r->mptcp.nsub++];

			u->stream = i;
			session_subflow_addr(&sf[j].local, u->local,
					     sizeof(u->local));
			session_subflow_addr(&sf[j].remote, u->remote,
					     sizeof(u->remote));
			u->sent = sf[j].bytes_acked;
			u->received = sf[j].bytes_received;
		}
	}
}

const char *session_name(const struct session *s)
{
	const struct session_link *l = s->o->link;

	return l && l->label ? l->label : s->o->file;
}

/* Stream 0's TLS session, as the report shows it. */
static void session_fill_tls(struct session *s)
{
	const struct dnd_tls *t = s->sock[0] >= 0 ? chan_tls(s->sock[0]) :
				  NULL;
	struct dnd_result *r = &s->res;
	const char *g;

	if (!t)
		return;
	g = tls_group(t);
	r->tls.on = true;
	snprintf(r->tls.version, sizeof(r->tls.version), "%s", tls_version(t));
	snprintf(r->tls.cipher, sizeof(r->tls.cipher), "%s", tls_cipher(t));
	snprintf(r->tls.group, sizeof(r->tls.group), "%s", g ? g : "");
	r->tls.auth = tls_auth(t);
	r->tls.ktls_tx = tls_ktls_tx(t);
	r->tls.ktls_rx = tls_ktls_rx(t);
	snprintf(r->tls.ktls_why, sizeof(r->tls.ktls_why), "%s",
		 tls_ktls_why(t));
}

static void session_fill_result(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_result *r = &s->res;
	struct xfer_out out;

	xfer_totals(&s->t, &out);
	r->sender = o->sender;
	r->dnd2006_line = o->dnd2006_line;
	r->intervals_on = o->interval > 0 && o->json && !o->json_stream;
	r->method = o->m->name;
	r->file = session_name(s);
	r->bytes = xfer_done(&s->t);
	r->length = s->end.known ? s->end.len : UINT64_MAX;
	r->sc = out.sc;
	r->zc = out.zc;
	r->bsz = o->bsz;
	r->eff_bsz = out.eff_bsz ? out.eff_bsz : o->bsz;
	if (o->link && o->link->capped) {
		snprintf(r->capped, sizeof(r->capped), "%s", o->link->capped);
		r->asked_bsz = o->link->asked_bsz;
	}
	r->uses_pipe = o->m->flags & DND_M_PIPE;
	r->pipe_size = o->pipe_size;
	r->pipe_got = out.pipe_got;
	r->window = o->window;
	r->window_from = o->window_from ? o->window_from : "default";
	r->rate = o->sender ? o->rate : 0;
	r->congestion_asked = o->congestion;
	r->raw = o->raw;
	if (!r->verdict)
		r->verdict = "failed";
	if (out.detail[0] && !r->detail[0])
		snprintf(r->detail, sizeof(r->detail), "%s", out.detail);
	r->resumed_from = s->start;
	r->sparse = s->sparse;
	r->holes = xfer_holes(&s->t);
	r->extents = s->n_ext;
	if (s->sock[0] >= 0) {
		net_bufs(s->sock[0], &r->sndbuf, &r->rcvbuf);
		net_congestion_get(s->sock[0], r->congestion,
				   sizeof(r->congestion));
		r->have_tcp = net_tcp_info(s->sock[0], &r->tcp) == 0;
	}
	session_fill_tls(s);
	session_fill_streams(s);
	session_fill_mptcp(s);
}

static void session_cleanup(struct session *s, int code)
{
	unsigned int i;

	/* A hash still running reads the file closed below. */
	session_hash_cancel(s);
	/* The streams' counts say what a kept partial file holds. */
	if (!s->end.landing)
		endpoint_close(&s->end);
	else if (!code)
		land_free(&s->land);
	else if (!s->o->resume || session_keep(s))
		land_abort(&s->land);
	xfer_close(&s->t);
	xfer_unready();
	XXH3_freeState(s->hash);
	free(s->ext);
	for (i = 0; i < DND_STREAMS_MAX; i++)
		XXH3_freeState(s->range_st[i]);
	for (i = 1; i < s->n; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	io_stop_fd = -1;
	for (i = 0; i < DND_STREAMS_MAX; i++)
		if (s->sock[i] >= 0)
			chan_close(s->sock[i]);
	if (s->lfd >= 0)
		close(s->lfd);
}

int session_run(const struct session_opts *o)
{
	struct session s = { .o = o, .lfd = -1, .n = 1 };
	unsigned int i;
	int code;

	for (i = 0; i < DND_STREAMS_MAX; i++)
		s.sock[i] = s.fd[i] = -1;
	s.land.fd = -1;
	s.end.fd = -1;
	io_install_signals();
	net_use_mptcp(o->mptcp);
	/* The report goes where the data does not. */
	s.out = !o->sender && !strcmp(o->file, "-") ? stderr : stdout;
	code = session_open_end(&s);
	if (!code)
		code = session_check_method(&s);
	if (!code)
		code = o->sender ? session_send(&s) : session_recv(&s);
	session_fill_result(&s);
	if (o->link && !code)
		session_link_report(&s);
	if (o->link && o->link->res)
		*o->link->res = s.res;
	/* A request refused before it ran has no numbers; JSON still says why. */
	if (o->link && o->link->server)
		;	/* its report went to the client */
	else if (o->json || o->json_stream)
		report_json(s.out, &s.res);
	/* A failure's cause is printed once, when it happens; the numbers
	 * around it are for -v. */
	else if (!code || (code == 1 && (o->verbose || !s.res.error[0])))
		report_text(s.out, &s.res);
	session_cleanup(&s, code);
	report_free(&s.res);
	return code;
}
