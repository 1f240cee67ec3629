// SPDX-License-Identifier: MIT
/*
 * One transfer end to end (see session.h and proto.h). Timing follows seed
 * 000: the sender's clock runs from just before the first byte is read until
 * just after the last is sent; the receiver's from just before the first
 * payload byte is received until just after the last is synced to disk.
 * Hashing, landing and the reply happen outside the timed window.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/io.h"
#include "core/land.h"
#include "core/log.h"
#include "xfer/method.h"
#include "core/net.h"
#include "core/pipe.h"
#include "core/proto.h"
#include "xfer/report.h"
#include "xfer/session.h"
#include "xfer/xfer.h"

struct session {
	const struct session_opts *o;
	struct dnd_xfer x;
	struct dnd_result res;
	struct dnd_land land;
	bool landing;		/* receiver writes through land.c */
	bool own_fd;
	int sock;
	uint64_t len;		/* payload length when known */
	bool known;
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

static bool is_dev(const struct stat *st, unsigned int maj, unsigned int min)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == maj &&
	       minor(st->st_rdev) == min;
}

/* Opens and classifies the source; 0 or 2 (usage, printed). */
static int session_open_source(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_xfer *x = &s->x;
	struct stat st;
	int n;

	x->fd = strcmp(o->file, "-") ? open(o->file, O_RDONLY | O_CLOEXEC) : 0;
	s->own_fd = x->fd != 0;
	if (x->fd == -1 || fstat(x->fd, &st) == -1) {
		return session_usage(s, "cannot open %s: %s", o->file,
				     strerror(errno));
	}
	x->fmode = st.st_mode;
	s->known = true;
	if (S_ISREG(st.st_mode)) {
		off_t at = lseek(x->fd, 0, SEEK_CUR);
		char c;

		x->ep = DND_EP_FILE;
		x->pos = at > 0 ? at : 0;
		/* /proc and /sys files say size 0 yet have data: their length
		 * is only known by reading them, like a pipe's. */
		if (st.st_size <= x->pos && pread(x->fd, &c, 1, x->pos) == 1)
			return session_usage(s, "%s says it is empty but has "
					     "data (a pseudo-file); send it "
					     "as a stream: cat %s | dnd send "
					     "... -", o->file, o->file);
		s->len = (uint64_t)(st.st_size > x->pos ? st.st_size - x->pos : 0);
		if (o->has_limit && o->limit < s->len)
			s->len = o->limit;
		return 0;
	}
	x->ep = is_dev(&st, 1, 5) ? DND_EP_ZERO : DND_EP_STREAM;
	if (S_ISDIR(st.st_mode)) {
		return session_usage(s, "%s is a directory; name a file",
				     o->file);
	}
	if (o->has_limit) {
		s->len = o->limit;
		return 0;
	}
	if (x->ep == DND_EP_ZERO || ioctl(x->fd, FIONREAD, &n) == -1) {
		return session_usage(s, "%s has no end that dnd can see; "
				     "give -l SIZE", o->file);
	}
	s->known = false;
	return 0;
}

/* Classifies the sink; opens it unless it is landed later. 0 or 2. */
static int session_open_sink(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_xfer *x = &s->x;
	char err[256];
	struct stat st;

	if (!strcmp(o->file, "-")) {
		x->fd = 1;
		if (fstat(1, &st) == -1) {
			return session_usage(s, "standard output is closed");
		}
		x->ep = DND_EP_STREAM;
		x->fmode = st.st_mode;
		return 0;
	}
	if (stat(o->file, &st) == 0 && !S_ISREG(st.st_mode) &&
	    !S_ISDIR(st.st_mode)) {
		x->fd = open(o->file, O_WRONLY | O_CLOEXEC);
		if (x->fd == -1)
			return session_usage(s, "cannot open %s: %s", o->file,
					     strerror(errno));
		s->own_fd = true;
		x->ep = is_dev(&st, 1, 3) ? DND_EP_NULL : DND_EP_STREAM;
		x->fmode = st.st_mode;
		return 0;
	}
	if (land_check(o->file, o->overwrite, o->truncate, err, sizeof(err)))
		return session_usage(s, "%s", err);
	s->landing = true;
	x->ep = DND_EP_FILE;
	x->fmode = S_IFREG;
	return 0;
}

/* Method against the file end, and against this kernel. 0, 1 or 2. */
static int session_check_method(struct session *s)
{
	const struct dnd_method *m = s->o->m;
	char why[256] = "";

	if (m->check && m->check(&s->x, why, sizeof(why)))
		return session_usage(s, "%s", why);
	if (method_probe(m, why, sizeof(why)))
		return session_fail(s, "%s is not usable here: %s", m->name,
				    why);
	return 0;
}

/* Turns the transfer's first failure into a message naming the cause. */
static int session_xfer_failed(struct session *s)
{
	const struct dnd_xfer *x = &s->x;
	unsigned long long done = x->done;
	const char *f = s->o->file;

	switch (-x->err) {
	case ENODATA:
		if (x->sender)
			return session_fail(s, "short source: %s ended after "
					    "%llu of %llu bytes", f, done,
					    (unsigned long long)s->len);
		if (!s->known)
			return session_fail(s, "short transfer: the sender "
					    "closed the connection after %llu "
					    "bytes without ending the stream "
					    "(it failed or was stopped)", done);
		return session_fail(s, "short transfer: the sender closed the "
				    "connection after %llu of %llu bytes (it "
				    "failed or was stopped)", done,
				    (unsigned long long)s->len);
	case ETIMEDOUT:
		return session_fail(s, "no progress for %g s after %llu bytes; "
				    "the peer stalled (--timeout)",
				    s->o->timeout, done);
	case EINTR:
		return session_fail(s, "interrupted by %s after %llu bytes",
				    strsignal(io_stop_signal), done);
	case EPIPE:
		if (!x->sender)
			return session_fail(s, "the reader of %s went away "
					    "after %llu bytes (broken pipe)", f,
					    done);
		/* fall through */
	case ECONNRESET:
		return session_fail(s, x->sender ?
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

static int session_setup_method(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_xfer *x = &s->x;
	int r;

	x->m = o->m;
	x->sender = o->sender;
	x->sock = s->sock;
	x->bsz = o->bsz;
	x->pipe_size = o->pipe_size;
	x->splice_flags = o->splice_flags;
	x->qd = o->qd;
	x->sync_every = o->sync_every;
	x->progress = isatty(2) && !o->json;
	r = o->m->setup(x);
	if (r) {
		if (!x->err)
			xfer_fail(x, r, "setup");
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
			    (unsigned long long)s->x.done);
}

/* Times the payload between two samples: the seed's window. */
static int session_payload(struct session *s)
{
	struct dnd_xfer *x = &s->x;
	struct dnd_sample a, b;
	int r;

	stats_sample(&a);
	if (s->o->raw && (!x->sender || !s->known))
		r = xfer_move_until_eof(x);
	else if (x->sender)
		r = xfer_send_payload(x, s->len, s->known);
	else
		r = xfer_recv_payload(x, s->len, s->known);
	if (!r && x->m->finish)
		r = x->m->finish(x);
	if (!r && !x->sender && x->ep == DND_EP_FILE) {
		r = io_fdatasync(&x->sc, x->fd);
		if (r)
			xfer_fail(x, r, "fdatasync");
	}
	stats_sample(&b);
	stats_cost(&a, &b, x->done, &s->res.cost);
	s->res.timed = true;
	return r ? session_xfer_failed(s) : 0;
}

/* The sender's hash of what it sent: re-read, computed, or hashed inline. */
static int session_source_hash(struct session *s, struct dnd_end *t,
			       off_t start)
{
	struct dnd_xfer *x = &s->x;
	int r;

	t->bytes = x->done;
	if (!s->o->verify)
		return 0;
	if (x->ep == DND_EP_FILE) {
		r = hash_fd(x->fd, start, x->done, &t->hash);
		if (r)
			return session_fail(s, "cannot re-read %s to hash it: "
					    "%s", s->o->file, strerror(-r));
		t->flags = DND_TF_HASH;
	} else if (x->ep == DND_EP_ZERO) {
		t->hash = hash_zeros(x->done);
		t->flags = DND_TF_HASH;
	} else if (x->hash) {
		t->hash = XXH3_64bits_digest(x->hash);
		t->flags = DND_TF_HASH;
	}
	return 0;
}

static int session_send_msg(struct session *s, const uint8_t *msg,
			    const char *what)
{
	int r = net_send_all(s->sock, msg, DND_MSG_LEN);

	return r ? session_fail(s, "cannot send the %s: %s", what,
				strerror(-r)) : 0;
}

/*
 * Reads one message, waiting at most secs (0: for ever). After the payload
 * the peer first re-reads and hashes everything, so callers allow for it.
 */
static int session_recv_msg(struct session *s, uint8_t *msg, const char *what,
			    double secs)
{
	int r;

	net_tune(s->sock, secs);
	r = net_recv_all(s->sock, msg, DND_MSG_LEN);
	if (r == -ENODATA)
		return session_fail(s, "the peer closed the connection before "
				    "the %s", what);
	if (r == -EINTR && io_stop_signal)
		return session_fail(s, "interrupted by %s while waiting for "
				    "the %s", strsignal(io_stop_signal), what);
	if (r == -EAGAIN)
		return session_fail(s, "no %s within %.0f s (--timeout)", what,
				    secs);
	return r ? session_fail(s, "cannot read the %s: %s", what,
				strerror(-r)) : 0;
}

/*
 * How long to wait for a peer that is hashing the whole payload first:
 * --timeout plus the payload at a slow 50 MB/s (a cold disk re-read).
 */
static double session_hash_wait(const struct session *s)
{
	return s->o->timeout ? s->o->timeout + (double)s->x.done / 5e7 : 0;
}

/* Both hashes present and equal: verified; either missing: counted. */
static void session_verdict(struct session *s, const struct dnd_end *mine,
			    const struct dnd_end *theirs)
{
	s->res.hash_valid = mine->flags & theirs->flags & DND_TF_HASH;
	s->res.hash = s->res.hash_valid ? mine->hash : 0;
	s->res.verdict = s->res.hash_valid ? "verified" : "counted";
}

static int session_send(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_xfer *x = &s->x;
	struct dnd_end t = { 0 }, rep;
	uint8_t msg[DND_MSG_LEN];
	off_t start = x->pos;
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
	if (session_setup_method(s))
		return 1;
	if (x->ep == DND_EP_STREAM && o->verify && !o->raw &&
	    (o->m->flags & DND_M_USERBUF)) {
		x->hash = XXH3_createState();
		if (!x->hash)
			return session_fail(s, "out of memory");
		XXH3_64bits_reset(x->hash);
	}
	if (!o->raw) {
		struct dnd_hdr h = {
			.version = DND_PROTO_VERSION,
			.flags = s->known ? 0 : DND_HF_SEGMENTED,
			.length = s->known ? s->len : 0,
		};

		proto_put_hdr(msg, &h);
		if (session_send_msg(s, msg, "header"))
			return 1;
	}
	if (session_payload(s))
		return 1;
	if (o->raw) {
		s->res.verdict = "unchecked";
		snprintf(s->res.detail, sizeof(s->res.detail),
			 "--raw: no framing, nothing verified");
		shutdown(s->sock, SHUT_WR);
		return 0;
	}
	if (session_stopped(s) || session_source_hash(s, &t, start))
		return 1;
	proto_put_end(msg, true, &t);
	if (session_send_msg(s, msg, "trailer"))
		return 1;
	shutdown(s->sock, SHUT_WR);
	/* The receiver re-reads what landed before it answers. */
	if (session_recv_msg(s, msg, "receiver's reply", session_hash_wait(s)))
		return 1;
	if (proto_get_end(msg, false, &rep, err, sizeof(err)))
		return session_fail(s, "receiver's reply: %s", err);
	if (rep.status != DND_ST_OK)
		return session_fail(s, "the receiver refused the data: %s "
				    "(%llu bytes landed of %llu sent)",
				    proto_status_name(rep.status),
				    (unsigned long long)rep.bytes,
				    (unsigned long long)x->done);
	if (rep.bytes != x->done ||
	    (t.flags & rep.flags & DND_TF_HASH && t.hash != rep.hash))
		return session_fail(s, "the receiver's count or hash differs "
				    "from what was sent");
	session_verdict(s, &t, &rep);
	return 0;
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
	uint8_t msg[DND_MSG_LEN];
	struct dnd_hdr h;
	char why[160];

	if (session_recv_msg(s, msg, "header", s->o->timeout))
		return 1;
	if (proto_get_hdr(msg, &h, why, sizeof(why)))
		return session_fail(s, "bad header from %s: %s", s->res.peer,
				    why);
	s->known = !(h.flags & DND_HF_SEGMENTED);
	s->len = h.length;
	return 0;
}

/* Checks the trailer against what landed; fills the reply. 0 or 1. */
static int session_recv_verify(struct session *s, struct dnd_end *rep)
{
	struct dnd_xfer *x = &s->x;
	uint8_t msg[DND_MSG_LEN];
	struct dnd_end t;
	char why[160];
	int r;

	rep->bytes = x->done;
	if (s->o->verify && x->ep == DND_EP_FILE) {
		r = hash_fd(x->fd, 0, x->done, &rep->hash);
		if (r) {
			rep->status = DND_ST_IOERR;
			return session_fail(s, "cannot re-read %s to hash it: "
					    "%s", s->o->file, strerror(-r));
		}
		rep->flags = DND_TF_HASH;
	}
	/* The sender re-reads its source before it sends the trailer. */
	if (session_recv_msg(s, msg, "sender's trailer", session_hash_wait(s)))
		return 1;
	if (proto_get_end(msg, true, &t, why, sizeof(why)))
		return session_fail(s, "bad trailer from the sender: %s", why);
	if (t.bytes != x->done) {
		rep->status = DND_ST_SHORT;
		return session_fail(s, "the sender says it sent %llu bytes, "
				    "%llu arrived", (unsigned long long)t.bytes,
				    (unsigned long long)x->done);
	}
	if (t.flags & rep->flags & DND_TF_HASH && t.hash != rep->hash) {
		rep->status = DND_ST_MISMATCH;
		return session_fail(s, "hash mismatch: sent xxh3 %016llx, "
				    "landed %016llx; %s was not written",
				    (unsigned long long)t.hash,
				    (unsigned long long)rep->hash, s->o->file);
	}
	session_verdict(s, rep, &t);
	return 0;
}

static int session_recv(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_xfer *x = &s->x;
	struct dnd_end rep = { 0 };
	uint8_t msg[DND_MSG_LEN];
	char err[256];
	int r;

	if (session_accept(s))
		return 1;
	if (!o->raw && session_recv_header(s))
		return 1;
	if (s->landing) {
		if (land_open(&s->land, o->file, o->overwrite, o->truncate, err,
			      sizeof(err)))
			return session_fail(s, "%s", err);
		x->fd = s->land.fd;
	}
	if (session_setup_method(s) || session_payload(s) ||
	    session_stopped(s))
		return 1;
	if (o->raw) {
		s->res.verdict = "unchecked";
		snprintf(s->res.detail, sizeof(s->res.detail),
			 "--raw: no framing, nothing verified");
	} else if (session_recv_verify(s, &rep)) {
		if (!rep.status)
			return 1;
		/* Tell the sender why, so both sides fail with the cause. */
		proto_put_end(msg, false, &rep);
		net_send_all(s->sock, msg, sizeof(msg));
		return 1;
	}
	if (session_stopped(s))
		return 1;
	if (s->landing) {
		r = land_commit(&s->land, x->done, err, sizeof(err));
		x->fd = -1;
		if (r) {
			rep.status = DND_ST_IOERR;
			session_fail(s, "%s", err);
		}
	}
	if (!o->raw) {
		proto_put_end(msg, false, &rep);
		if (session_send_msg(s, msg, "reply"))
			return 1;
	}
	return s->res.error[0] ? 1 : 0;
}

static void session_fill_result(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_result *r = &s->res;
	struct dnd_xfer *x = &s->x;

	r->sender = o->sender;
	r->method = o->m->name;
	r->file = o->file;
	r->bytes = x->done;
	r->length = s->known ? s->len : UINT64_MAX;
	r->sc = x->sc;
	r->zc = x->zc;
	r->bsz = o->bsz;
	r->eff_bsz = x->eff_bsz ? x->eff_bsz : o->bsz;
	r->uses_pipe = o->m->flags & DND_M_PIPE;
	r->pipe_size = o->pipe_size;
	r->pipe_got = x->pipe_got;
	r->window = o->window;
	r->raw = o->raw;
	if (!r->verdict)
		r->verdict = "failed";
	if (x->detail[0] && !r->detail[0])
		snprintf(r->detail, sizeof(r->detail), "%s", x->detail);
	if (s->sock >= 0) {
		net_bufs(s->sock, &r->sndbuf, &r->rcvbuf);
		r->have_tcp = net_tcp_info(s->sock, &r->tcp) == 0;
	}
}

static void session_cleanup(struct session *s, int code)
{
	struct dnd_xfer *x = &s->x;

	if (x->m && x->m->teardown)
		x->m->teardown(x);
	XXH3_freeState(x->hash);
	if (s->landing) {
		if (code)
			land_abort(&s->land);
		else
			land_free(&s->land);
	} else if (s->own_fd && x->fd >= 0) {
		close(x->fd);
	}
	io_stop_fd = -1;
	if (s->sock >= 0)
		close(s->sock);
}

int session_run(const struct session_opts *o)
{
	struct session s = { .o = o, .sock = -1 };
	int code;

	xfer_init(&s.x, o->m, o->sender, -1, -1);
	s.land.fd = -1;
	io_install_signals();
	/* The report goes where the data does not. */
	s.out = !o->sender && !strcmp(o->file, "-") ? stderr : stdout;
	code = o->sender ? session_open_source(&s) : session_open_sink(&s);
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
