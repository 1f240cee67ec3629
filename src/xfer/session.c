// SPDX-License-Identifier: MIT
/*
 * One transfer end to end (see session.h and proto.h). Timing follows seed
 * 000: the sender's clock runs from just before the first byte is read until
 * just after the last is sent; the receiver's from just before the first
 * payload byte is received until just after the last is synced to disk.
 * The driver (xfer.c) times that window; hashing, landing and the reply
 * happen outside it. All framing is proto.c's.
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/io.h"
#include "core/land.h"
#include "core/log.h"
#include "core/net.h"
#include "core/pipe.h"
#include "core/proto.h"
#include "xfer/endpoint.h"
#include "xfer/method.h"
#include "xfer/report.h"
#include "xfer/session.h"
#include "xfer/xfer.h"

struct session {
	const struct session_opts *o;
	struct endpoint end;	/* the file end */
	struct xfer_cfg cfg;
	struct xfer t;		/* the driver's transfer: one stream */
	struct dnd_result res;
	struct dnd_land land;
	XXH3_state_t *hash;	/* a stream source hashed inline */
	int sock;
	FILE *out;		/* where the report goes */
};

/*
 * Records the failure message (first one wins), prints it, and returns
 * code: 1 for a failed transfer, 2 for a request that cannot be run.
 */
static int session_exit(struct session *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int session_exit(struct session *s, int code, const char *fmt, ...)
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

#define session_fail(s, ...) session_exit((s), 1, __VA_ARGS__)
#define session_usage(s, ...) session_exit((s), 2, __VA_ARGS__)

/* Opens the file end and fills the driver's settings from it. 0 or 2. */
static int session_open_end(struct session *s)
{
	const struct session_opts *o = s->o;
	char err[320];
	int r;

	r = o->sender ? endpoint_source(&s->end, o->file, o->has_limit,
					o->limit, err, sizeof(err)) :
			endpoint_sink(&s->end, o->file, o->overwrite,
				      o->truncate, err, sizeof(err));
	if (r)
		return session_usage(s, "%s", err);
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
		.progress = isatty(2) && !o->json,
		.hash_stream = o->sender && s->end.ep == DND_EP_STREAM &&
			       o->verify && !o->raw,
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
	const char *f = s->o->file;
	struct xfer_out out;

	/* Bytes a method had read into a buffer count as arrived. */
	xfer_totals(&s->t, &out);
	done += out.held;
	if (!x)
		return session_fail(s, "the transfer failed after %llu bytes",
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
		return session_fail(s, s->o->sender ?
				    "the receiver closed the connection after "
				    "%llu bytes (it failed: see its message)" :
				    "the sender reset the connection after "
				    "%llu bytes", done);
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

/* The driver's one stream over the connection: set up the method. 0 or 1. */
static int session_setup_method(struct session *s)
{
	const struct session_opts *o = s->o;
	const struct endpoint *e = &s->end;
	enum xfer_frame frame = XFER_LENGTH;
	int r;

	if (o->raw && (!o->sender || !e->known))
		frame = XFER_UNTIL_EOF;
	else if (!e->known)
		frame = XFER_SEGMENTS;
	r = xfer_open(&s->t, &s->cfg, 1);
	if (r)
		return session_fail(s, "cannot start the transfer: %s",
				    strerror(-r));
	xfer_stream(&s->t, 0, s->sock, e->fd, e->start, frame, e->len);
	s->t.length = e->known ? e->len : UINT64_MAX;
	s->t.st[0].hash = s->hash;
	r = xfer_setup(&s->t);
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

/* A stop request that came after the payload: nothing may land. */
static int session_stopped(struct session *s)
{
	if (!io_stop_signal)
		return 0;
	return session_fail(s, "interrupted by %s after %llu bytes",
			    strsignal(io_stop_signal),
			    (unsigned long long)xfer_done(&s->t));
}

/* The payload, timed by the driver: the seed's window. */
static int session_payload(struct session *s)
{
	int r = xfer_run(&s->t);

	s->res.cost = s->t.cost;
	s->res.timed = s->t.timed;
	return r ? session_xfer_failed(s) : 0;
}

/* The sender's hash of what it sent: re-read, computed, or hashed inline. */
static int session_source_hash(struct session *s, struct dnd_end *t)
{
	const struct endpoint *e = &s->end;
	int r;

	t->bytes = xfer_done(&s->t);
	if (!s->o->verify)
		return 0;
	if (e->ep == DND_EP_FILE) {
		r = hash_fd(e->fd, e->start, t->bytes, &t->hash);
		if (r)
			return session_fail(s, "cannot re-read %s to hash it: "
					    "%s", s->o->file, strerror(-r));
		t->flags = DND_TF_HASH;
	} else if (e->ep == DND_EP_ZERO) {
		t->hash = hash_zeros(t->bytes);
		t->flags = DND_TF_HASH;
	} else if (s->hash) {
		t->hash = XXH3_64bits_digest(s->hash);
		t->flags = DND_TF_HASH;
	}
	return 0;
}

static int session_sent(struct session *s, int r, const char *what)
{
	return r ? session_fail(s, "cannot send the %s: %s", what,
				strerror(-r)) : 0;
}

/*
 * Turns a failed proto_recv_* into a message. After the payload the peer
 * first re-reads and hashes everything, so callers allow for it in secs.
 */
static int session_recv_failed(struct session *s, int r, const char *what,
			       double secs)
{
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

/*
 * How long to wait for a peer that is hashing the whole payload first:
 * --timeout plus the payload at a slow 50 MB/s (a cold disk re-read).
 */
static double session_hash_wait(const struct session *s)
{
	return s->o->timeout ? s->o->timeout +
			       (double)xfer_done(&s->t) / 5e7 : 0;
}

/* Both hashes present and equal: verified; either missing: counted. */
static void session_verdict(struct session *s, const struct dnd_end *mine,
			    const struct dnd_end *theirs)
{
	s->res.hash_valid = mine->flags & theirs->flags & DND_TF_HASH;
	s->res.hash = s->res.hash_valid ? mine->hash : 0;
	s->res.verdict = s->res.hash_valid ? "verified" : "counted";
}

static void session_unchecked(struct session *s)
{
	s->res.verdict = "unchecked";
	snprintf(s->res.detail, sizeof(s->res.detail),
		 "--raw: no framing, nothing verified");
}

/* The sender's message for a reply that says the data did not land. */
static int session_refused(struct session *s, const struct dnd_end *rep,
			   uint64_t done)
{
	if (rep->status == DND_ST_IOERR)
		return session_fail(s, "the receiver could not land the file "
				    "(see its message); nothing was landed");
	if (rep->status == DND_ST_NOHASH)
		return session_fail(s, "the receiver refused the data: it "
				    "verifies and this sender sent no hash "
				    "(--no-verify here needs --no-verify there)");
	return session_fail(s, "the receiver refused the data: %s (%llu "
			    "bytes landed of %llu sent)",
			    proto_status_name(rep->status),
			    (unsigned long long)rep->bytes,
			    (unsigned long long)done);
}

/* After the payload: trailer out, the receiver's reply in. 0 or 1. */
static int session_send_end(struct session *s)
{
	struct dnd_end t = { 0 }, rep;
	uint64_t done = xfer_done(&s->t);
	double wait;
	char err[256];
	int r;

	if (session_stopped(s) || session_source_hash(s, &t))
		return 1;
	if (session_sent(s, proto_send_end(s->sock, true, &t), "trailer"))
		return 1;
	shutdown(s->sock, SHUT_WR);
	/* The receiver re-reads what landed before it answers. */
	wait = session_hash_wait(s);
	net_tune(s->sock, wait);
	r = proto_recv_end(s->sock, false, &rep, err, sizeof(err));
	if (r == -EBADMSG)
		return session_fail(s, "receiver's reply: %s", err);
	if (r) {
		/* All was sent: only the confirmation is missing. */
		session_recv_failed(s, r, "receiver's reply", wait);
		snprintf(s->res.warning, sizeof(s->res.warning), "the data "
			 "may have landed: check the receiver's side");
		log_err("the data may have landed: check the receiver's side");
		return 1;
	}
	if (rep.status != DND_ST_OK)
		return session_refused(s, &rep, done);
	if (rep.bytes != done ||
	    (t.flags & rep.flags & DND_TF_HASH && t.hash != rep.hash))
		return session_fail(s, "the receiver's count or hash differs "
				    "from what was sent");
	session_verdict(s, &t, &rep);
	return 0;
}

static int session_send(struct session *s)
{
	const struct session_opts *o = s->o;
	char err[256];

	s->sock = net_connect(o->host, o->port, (int)o->window,
			      o->connect_timeout, o->timeout, s->res.peer,
			      sizeof(s->res.peer), err, sizeof(err));
	if (s->sock < 0)
		return session_fail(s, "%s", err);
	io_stop_fd = s->sock;
	if (net_tune(s->sock, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	if (s->cfg.hash_stream) {
		s->hash = XXH3_createState();
		if (!s->hash)
			return session_fail(s, "out of memory");
		XXH3_64bits_reset(s->hash);
	}
	if (session_setup_method(s))
		return 1;
	if (!o->raw) {
		struct dnd_hdr h = {
			.version = DND_PROTO_VERSION,
			.flags = s->end.known ? 0 : DND_HF_SEGMENTED,
			.length = s->end.known ? s->end.len : 0,
		};

		if (session_sent(s, proto_send_hdr(s->sock, &h), "header"))
			return 1;
	}
	if (session_payload(s))
		return 1;
	if (o->raw) {
		session_unchecked(s);
		shutdown(s->sock, SHUT_WR);
		return 0;
	}
	return session_send_end(s);
}

static int session_accept(struct session *s)
{
	const struct session_opts *o = s->o;
	char err[256];
	int lfd;

	lfd = net_listen(o->bind, o->port, (int)o->window, err, sizeof(err));
	if (lfd < 0)
		return session_fail(s, "%s", err);
	s->sock = net_accept(lfd, s->res.peer, sizeof(s->res.peer));
	close(lfd);
	if (s->sock == -EINTR)
		return session_fail(s, "interrupted by %s while waiting for "
				    "a sender", strsignal(io_stop_signal));
	if (s->sock < 0)
		return session_fail(s, "accept: %s", strerror(-s->sock));
	io_stop_fd = s->sock;
	if (net_tune(s->sock, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	return 0;
}

static int session_recv_header(struct session *s)
{
	struct dnd_hdr h;
	char why[160];
	int r;

	r = proto_recv_hdr(s->sock, &h, why, sizeof(why));
	if (r == -EBADMSG)
		return session_fail(s, "bad header from %s: %s", s->res.peer,
				    why);
	if (r)
		return session_recv_failed(s, r, "header", s->o->timeout);
	s->end.known = !(h.flags & DND_HF_SEGMENTED);
	s->end.len = h.length;
	return 0;
}

/* Checks the trailer against what landed; fills the reply. 0 or 1. */
static int session_recv_verify(struct session *s, struct dnd_end *rep)
{
	uint64_t done = xfer_done(&s->t);
	struct dnd_end t;
	char why[160];
	double wait;
	int r;

	rep->bytes = done;
	if (s->o->verify && s->end.ep == DND_EP_FILE) {
		r = hash_fd(s->end.fd, 0, done, &rep->hash);
		if (r) {
			rep->status = DND_ST_IOERR;
			return session_fail(s, "cannot re-read %s to hash it: "
					    "%s", s->o->file, strerror(-r));
		}
		rep->flags = DND_TF_HASH;
	}
	/* The sender re-reads its source before it sends the trailer. */
	wait = session_hash_wait(s);
	net_tune(s->sock, wait);
	r = proto_recv_end(s->sock, true, &t, why, sizeof(why));
	if (r == -EBADMSG)
		return session_fail(s, "bad trailer from the sender: %s", why);
	if (r)
		return session_recv_failed(s, r, "sender's trailer", wait);
	r = proto_recv_eof(s->sock);
	if (r == -EBADMSG) {
		rep->status = DND_ST_MALFORMED;
		return session_fail(s, "malformed stream from the peer: bytes "
				    "after the sender's trailer; %s was not "
				    "written", s->o->file);
	}
	if (r)
		return session_recv_failed(s, r, "end of the sender's stream",
					   wait);
	if (t.bytes != done) {
		rep->status = DND_ST_SHORT;
		return session_fail(s, "the sender says it sent %llu bytes, "
				    "%llu arrived", (unsigned long long)t.bytes,
				    (unsigned long long)done);
	}
	if (t.flags & rep->flags & DND_TF_HASH && t.hash != rep->hash) {
		rep->status = DND_ST_MISMATCH;
		return session_fail(s, "hash mismatch: sent xxh3 %016llx, "
				    "landed %016llx; %s was not written",
				    (unsigned long long)t.hash,
				    (unsigned long long)rep->hash, s->o->file);
	}
	/* The receiver decides what it accepts: a file it was asked to
	 * verify lands only against the sender's hash. */
	if (rep->flags & DND_TF_HASH && !(t.flags & DND_TF_HASH)) {
		rep->status = DND_ST_NOHASH;
		return session_fail(s, "the sender sent no hash (it ran with "
				    "--no-verify), so nothing could be "
				    "verified; %s was not written (receive "
				    "with --no-verify to accept unverified "
				    "data)", s->o->file);
	}
	session_verdict(s, rep, &t);
	return 0;
}

/* The receiver's sync line: what made the landed file durable. */
static void session_sync_note(struct session *s)
{
	if (!s->end.landing)
		return;
	snprintf(s->res.sync, sizeof(s->res.sync), "%s%sfdatasync, %s",
		 s->o->sync_every ? "writeback started every " : "",
		 s->o->sync_every ? "--sync stream step, then " : "",
		 s->land.in_place ?
		 "rewritten in place" : "renamed, directory fsynced");
}

static int session_recv(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_end rep = { 0 };
	char err[256];
	int r;

	if (session_accept(s))
		return 1;
	if (!o->raw && session_recv_header(s))
		return 1;
	if (s->end.landing) {
		if (land_open(&s->land, o->file, o->overwrite, o->truncate, err,
			      sizeof(err)))
			return session_fail(s, "%s", err);
		s->end.fd = s->land.fd;
	}
	if (session_setup_method(s) || session_payload(s) ||
	    session_stopped(s))
		return 1;
	if (o->raw) {
		session_unchecked(s);
	} else if (session_recv_verify(s, &rep)) {
		/* Tell the sender why, so both sides fail with the cause. */
		if (rep.status)
			proto_send_end(s->sock, false, &rep);
		return 1;
	}
	if (session_stopped(s))
		return 1;
	if (s->end.landing) {
		session_sync_note(s);
		r = land_commit(&s->land, xfer_done(&s->t), err, sizeof(err));
		s->end.fd = -1;
		if (r && !s->land.landed) {
			rep.status = DND_ST_IOERR;
			session_fail(s, "%s", err);
		} else if (r) {
			snprintf(s->res.warning, sizeof(s->res.warning), "%s",
				 err);
			log_err("warning: %s", err);
		}
	}
	if (o->raw)
		return s->res.error[0] ? 1 : 0;
	r = proto_send_end(s->sock, false, &rep);
	if (r && !s->res.error[0]) {
		/* Landed and verified: the exit code follows the disk. */
		snprintf(s->res.warning, sizeof(s->res.warning), "landed and "
			 "verified, but the sender did not get the "
			 "confirmation: %s", strerror(-r));
		log_err("warning: %s", s->res.warning);
	}
	return s->res.error[0] ? 1 : 0;
}

static void session_fill_result(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_result *r = &s->res;
	struct xfer_out out;

	xfer_totals(&s->t, &out);
	r->sender = o->sender;
	r->method = o->m->name;
	r->file = o->file;
	r->bytes = xfer_done(&s->t);
	r->length = s->end.known ? s->end.len : UINT64_MAX;
	r->sc = out.sc;
	r->zc = out.zc;
	r->bsz = o->bsz;
	r->eff_bsz = out.eff_bsz ? out.eff_bsz : o->bsz;
	r->uses_pipe = o->m->flags & DND_M_PIPE;
	r->pipe_size = o->pipe_size;
	r->pipe_got = out.pipe_got;
	r->window = o->window;
	r->raw = o->raw;
	if (!r->verdict)
		r->verdict = "failed";
	if (out.detail[0] && !r->detail[0])
		snprintf(r->detail, sizeof(r->detail), "%s", out.detail);
	if (s->sock >= 0) {
		net_bufs(s->sock, &r->sndbuf, &r->rcvbuf);
		r->have_tcp = net_tcp_info(s->sock, &r->tcp) == 0;
	}
}

static void session_cleanup(struct session *s, int code)
{
	xfer_close(&s->t);
	XXH3_freeState(s->hash);
	if (s->end.landing) {
		if (code)
			land_abort(&s->land);
		else
			land_free(&s->land);
	} else {
		endpoint_close(&s->end);
	}
	io_stop_fd = -1;
	if (s->sock >= 0)
		close(s->sock);
}

int session_run(const struct session_opts *o)
{
	struct session s = { .o = o, .sock = -1 };
	int code;

	s.land.fd = -1;
	s.end.fd = -1;
	io_install_signals();
	/* The report goes where the data does not. */
	s.out = !o->sender && !strcmp(o->file, "-") ? stderr : stdout;
	code = session_open_end(&s);
	if (!code)
		code = session_check_method(&s);
	if (!code)
		code = o->sender ? session_send(&s) : session_recv(&s);
	session_fill_result(&s);
	/* A request refused before it ran has no numbers; JSON still says why. */
	if (o->json)
		report_json(s.out, &s.res);
	else if (code != 2)
		report_text(s.out, &s.res);
	session_cleanup(&s, code);
	return code;
}
