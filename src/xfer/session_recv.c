// SPDX-License-Identifier: MIT
/*
 * The receiver's dialogue (proto.h): the header, the accept (offering a
 * partial file kept by --resume), the sender's plan, every stream's join,
 * the payload through the driver, then the trailer checked against what
 * landed, the landing and the reply. The receiver decides what it accepts.
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/net.h"
#include "xfer/method.h"
#include "xfer/session_link.h"
#include "xfer/session_streams.h"
#include "xfer/session_types.h"

/* Listens and says where, so a script can start its sender. 0 or 1. */
static int recv_listen(struct session *s)
{
	const struct session_opts *o = s->o;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char err[256], at[96];

	s->lfd = net_listen(o->bind, o->port, (int)o->window, false, err,
			    sizeof(err));
	if (s->lfd < 0)
		return session_fail(s, "%s", err);
	if (getsockname(s->lfd, (struct sockaddr *)&ss, &sl) == 0) {
		net_addr_str((struct sockaddr *)&ss, sl, at, sizeof(at));
		log_err("listening on %s", at);
	}
	return 0;
}

static int recv_header(struct session *s, struct dnd_hdr *h)
{
	char why[320];
	int r;

	r = proto_recv_hdr(s->sock[0], h, why, sizeof(why));
	if (r == -EPROTOTYPE)
		return session_refuse_other(s, why);
	if (r == -EBADMSG)
		return session_fail(s, "bad header from %s: %s", s->res.peer,
				    why);
	if (r)
		return session_recv_failed(s, r, "header", s->o->timeout);
	s->end.known = !(h->flags & DND_HF_SEGMENTED);
	s->end.len = h->length;
	s->n = h->streams;
	s->xfer_id = h->xfer_id;
	s->ident = h->ident;
	/* Holes offered: a file landed by a method that writes at x->pos
	 * leaves them holes (or punches them, rewriting in place). */
	s->sparse_ok = h->flags & DND_HF_SPARSE && s->end.landing &&
		       s->o->m->flags & DND_M_SEEKS && !s->o->direct;
	return 0;
}

/*
 * dnd serve: the declared length's blocks, taken before any byte comes, so
 * that the free space checked is still there for this push whatever other
 * sessions land meanwhile. A file system without fallocate() is said in
 * the report: there the space was only checked. 0 or 1.
 */
static int recv_reserve(struct session *s)
{
	char err[256];
	int r;

	uint32_t i;

	if (!s->end.known || !s->end.len)
		return 0;
	for (i = 0, r = 0; s->sparse && !r && i < s->n_ext; i++)
		r = land_reserve(&s->land, s->ext[i].off, s->ext[i].len, err,
				 sizeof(err));
	if (!s->sparse)
		r = land_reserve(&s->land, 0, s->end.len, err, sizeof(err));
	if (r == -EOPNOTSUPP) {
		snprintf(s->res.warning, sizeof(s->res.warning), "%s", err);
		return 0;
	}
	return r ? session_fail(s, "%s", err) : 0;
}

/* Whether this receiver compares a hash of what landed with the sender's. */
static bool recv_verifies(const struct session *s)
{
	return s->o->verify && s->end.ep == DND_EP_FILE;
}

/*
 * Whether it hashes the bytes as they arrive (--verify received) instead
 * of reading the landed file back: its method holds them in user memory,
 * in file order within a stream. One stream feeds the whole file's XXH3
 * from the first byte to the last; -P N streams land their ranges at
 * once, so each feeds its range's own, compared with the sender's range
 * by range (proto.h's ranges message).
 */
static bool recv_as_received(const struct session *s)
{
	return recv_verifies(s) && s->o->verify_how == DND_VERIFY_RECEIVED &&
	       s->o->m->flags & DND_M_RECVBUF;
}

/* The kept prefix's hash. Verifying one stream as received it also starts
 * the whole file's hash (s->hash), which the bytes arriving after it
 * continue (-P N: the sender checked the prefix against its own). */
static int recv_prefix_hash(struct session *s, uint64_t kept, uint64_t *h)
{
	int r;

	if (!recv_as_received(s) || s->n > 1)
		return hash_fd(s->end.fd, 0, kept, h);
	s->hash = XXH3_createState();
	if (!s->hash)
		return -ENOMEM;
	XXH3_64bits_reset(s->hash);
	r = hash_fd_into(s->hash, s->end.fd, 0, kept);
	if (!r)
		*h = XXH3_64bits_digest(s->hash);
	return r;
}

/* Opens the landing; with --resume maybe on a kept prefix. 0 or 1. */
static int recv_land(struct session *s, const struct dnd_hdr *h,
		     struct dnd_accept *a)
{
	const struct session_opts *o = s->o;
	char err[320], note[320];
	uint64_t kept = 0;
	int r;

	if (!o->resume)
		r = land_open(&s->land, o->file, o->overwrite, o->truncate,
			      err, sizeof(err));
	else
		r = land_open_resume(&s->land, o->file, o->truncate, h->ident,
				     h->length, &kept, note, sizeof(note), err,
				     sizeof(err));
	if (r)
		return session_fail(s, "%s", err);
	if (o->resume && note[0]) {
		snprintf(s->res.warning, sizeof(s->res.warning), "%s", note);
		log_err("%s", note);
	}
	s->land.label = session_name(s);
	s->end.fd = s->land.fd;
	if (o->link && o->link->landing && s->land.tmp)
		o->link->landing(o->link, s->land.fd, s->land.tmp);
	/* Holes offered: the data's blocks, once the plan tells them. */
	if (o->link && o->link->server && !s->sparse_ok && recv_reserve(s))
		return 1;
	if (kept) {
		r = recv_prefix_hash(s, kept, &a->prefix_hash);
		if (r)
			return session_fail(s, "cannot read the kept partial "
					    "file: %s", strerror(-r));
		a->flags = DND_AF_RESUME;
		a->resume_from = kept;
	}
	return 0;
}

/* What this receiver can take at all; else the status it answers with. */
static int recv_refusal(struct session *s)
{
	const struct session_link *l = s->o->link;

	if (l && l->max_bytes && (!s->end.known || s->end.len > l->max_bytes))
		return session_fail(s, "the sender declares %s%llu bytes, "
				    "above this server's --max-bytes %llu",
				    s->end.known ? "" : "no length, not ",
				    (unsigned long long)s->end.len,
				    (unsigned long long)l->max_bytes);
	if (l && l->server && (l->known != s->end.known ||
			       s->end.len != l->length)) {
		if (!s->end.known)
			return session_fail(s, "the request declared %llu "
					    "bytes, the stream comes without a "
					    "length: refused, nothing written",
					    (unsigned long long)l->length);
		if (!l->known)
			return session_fail(s, "the stream declares %llu "
					    "bytes, the request no length: "
					    "refused, nothing written",
					    (unsigned long long)s->end.len);
		return session_fail(s, "the stream declares %llu bytes, the "
				    "request %llu: refused, nothing written",
				    (unsigned long long)s->end.len,
				    (unsigned long long)l->length);
	}
	if (l && s->n != (s->o->streams ? s->o->streams : 1))
		return session_fail(s, "the sender splits the data over %u "
				    "streams, the request said %u", s->n,
				    s->o->streams ? s->o->streams : 1);
	if (s->n > 1 && s->end.ep == DND_EP_STREAM)
		return session_fail(s, "the sender splits the data over %u "
				    "streams, which a pipe or terminal sink "
				    "cannot take in order; send with -P 1",
				    s->n);
	return 0;
}

/*
 * The extents after a sparse plan: the file takes its length at once (the
 * holes past the last extent too) and, on dnd serve, the data's blocks
 * are reserved. 0 or 1.
 */
static int recv_extents(struct session *s)
{
	char why[200];
	int r;

	if (!s->sparse_ok)
		return session_fail(s, "malformed stream from the peer: "
				    "extents this receiver did not ask for");
	r = proto_recv_extents(s->sock[0], s->end.len, &s->ext, &s->n_ext,
			       why, sizeof(why));
	if (r == -EBADMSG)
		return session_fail(s, "malformed stream from the peer: %s",
				    why);
	if (r)
		return session_recv_failed(s, r, "sender's extents",
					   s->o->timeout);
	s->sparse = true;
	if (ftruncate(s->end.fd, (off_t)s->end.len) == -1)
		return session_fail(s, "cannot set the length of %s: %s",
				    session_name(s), strerror(errno));
	return s->o->link && s->o->link->server && recv_reserve(s);
}

/* Header in, accept out, plan in: where the payload starts. 0 or 1. */
static int recv_open(struct session *s)
{
	struct dnd_accept a = { 0 };
	struct dnd_plan p;
	struct dnd_hdr h;
	char why[160];
	int r;

	if (recv_header(s, &h))
		return 1;
	/* Room in the listen queue for every stream (net_listen's default
	 * is 16) before our accept lets the sender connect them. */
	if (s->lfd >= 0 && s->n > 1)
		listen(s->lfd, (int)s->n);
	s->owe = SESSION_OWE_ACCEPT;
	if (recv_refusal(s) || (s->end.landing && recv_land(s, &h, &a)))
		return 1;
	/* A sender hashes only for a receiver that will compare. */
	if (recv_verifies(s))
		a.flags |= DND_AF_VERIFY;
	if (s->sparse_ok)
		a.flags |= DND_AF_SPARSE;
	if (session_sent(s, proto_send_accept(s->sock[0], &a), "accept"))
		return 1;
	s->owe = SESSION_OWE_REPLY;
	r = proto_recv_plan(s->sock[0], &p, why, sizeof(why));
	if (r == -EBADMSG)
		return session_fail(s, "malformed stream from the peer: %s",
				    why);
	if (r)
		return session_recv_failed(s, r, "sender's plan",
					   session_hash_wait(s, a.resume_from));
	if (p.start && p.start != a.resume_from)
		return session_fail(s, "malformed stream from the peer: it "
				    "resumes at %llu, %llu bytes were kept",
				    (unsigned long long)p.start,
				    (unsigned long long)a.resume_from);
	if (p.flags & DND_PF_MISMATCH || (a.resume_from && !p.start)) {
		snprintf(s->res.warning, sizeof(s->res.warning), "the kept "
			 "%llu bytes differ from the sender's (the source "
			 "changed, or the partial file did): starting over",
			 (unsigned long long)a.resume_from);
		log_err("%s", s->res.warning);
		if (land_restart(&s->land))
			return session_fail(s, "cannot empty the partial file: "
					    "%s", strerror(errno));
	}
	s->start = p.start;
	s->ack_now = p.flags & DND_PF_ACKNOW;
	if (p.flags & DND_PF_SPARSE)
		return recv_extents(s);
	return s->sparse_ok && s->o->link && s->o->link->server &&
	       recv_reserve(s);
}

/*
 * The driver's before_sync: the whole payload has been written, so the
 * re-read that verifies it starts now, in a thread, while fdatasync waits
 * for the device (it reads what the sync writes out; O_DIRECT reads wait
 * for the range's writeback themselves).
 */
static void recv_rehash_start(struct xfer *t, void *arg)
{
	struct session *s = arg;

	session_hash_start(s, s->end.fd, 0, s->start + xfer_done(t),
			   s->o->direct);
}

/*
 * How what landed will be hashed, said in the report: as it arrives
 * (s->hash, which stream 0's method feeds; from the kept prefix's state
 * when resuming), or read back from the landed file once it is all
 * written. 0 or 1.
 */
static int recv_hash_plan(struct session *s)
{
	unsigned int i;

	if (recv_as_received(s) && s->n > 1) {
		for (i = 0; i < s->n; i++) {
			s->range_st[i] = XXH3_createState();
			if (!s->range_st[i])
				return session_fail(s, "out of memory");
			XXH3_64bits_reset(s->range_st[i]);
		}
		s->res.verify_kind = "as-received";
		s->res.verify_ranges = s->n;
	} else if (recv_as_received(s)) {
		if (!s->hash && !(s->hash = XXH3_createState()))
			return session_fail(s, "out of memory");
		if (!s->start)	/* nothing kept, or the kept prefix differed */
			XXH3_64bits_reset(s->hash);
		s->res.verify_kind = "as-received";
	} else if (recv_verifies(s)) {
		s->t.before_sync = recv_rehash_start;
		s->t.before_sync_arg = s;
		s->res.verify_kind = "readback";
	}
	return 0;
}

/* -P N: the sender's hash of each stream's range, after its trailer t,
 * and bound to t's hash. 0 or 1. */
static int recv_ranges(struct session *s, const struct dnd_end *t,
		       double wait)
{
	char why[160];
	int r = proto_recv_ranges(s->sock[0], s->n, s->range_hash, why,
				  sizeof(why));

	if (!r && s->range_hash[s->n] !=
		  proto_ranges_bind(t->hash, s->range_hash, s->n)) {
		snprintf(why, sizeof(why), "the ranges' hashes do not bind "
			 "to the trailer's xxh3 %016llx",
			 (unsigned long long)t->hash);
		r = -EBADMSG;
	}
	if (r == -EBADMSG && !chan_err(s->sock[0])[0])
		return session_fail(s, "malformed stream from the peer: %s; "
				    "%s was not written", why, session_name(s));
	return r ? session_recv_failed(s, r, "sender's ranges' hashes",
				       wait) : 0;
}

/* Each stream's range as it arrived against the sender's: the first that
 * differs is named, and nothing lands. 0 or 1 with rep's status set. */
static int recv_range_compare(struct session *s, struct dnd_end *rep)
{
	unsigned int i;
	uint64_t h;

	for (i = 0; i < s->n; i++) {
		h = XXH3_64bits_digest(s->range_st[i]);
		if (h == s->range_hash[i])
			continue;
		rep->status = DND_ST_MISMATCH;
		return session_fail(s, "hash mismatch in range %u of %u "
				    "(stream %u: bytes %llu-%llu): sent xxh3 "
				    "%016llx, landed %016llx; %s was not "
				    "written", i + 1, s->n, i,
				    (unsigned long long)s->join[i].offset,
				    (unsigned long long)(s->join[i].offset +
							 s->join[i].len - 1),
				    (unsigned long long)s->range_hash[i],
				    (unsigned long long)h, session_name(s));
	}
	return 0;
}

/* Checks the trailer against what landed; fills the reply. 0 or 1. */
static int recv_verify(struct session *s, struct dnd_end *rep)
{
	uint64_t total = s->start + xfer_done(&s->t);
	struct dnd_end t;
	char why[160];
	double wait;
	int r;

	rep->bytes = total;
	if (s->range_st[0]) {
		/* The file's hash is the sender's once every range matched. */
		rep->flags = DND_TF_HASH;
	} else if (s->hash) {
		rep->hash = XXH3_64bits_digest(s->hash);
		rep->flags = DND_TF_HASH;
	} else if (recv_verifies(s)) {
		r = session_hash_get(s, s->end.fd, 0, total, s->o->direct,
				     &rep->hash);
		if (r) {
			rep->status = DND_ST_IOERR;
			return session_fail(s, "cannot re-read %s to hash it: "
					    "%s", session_name(s), strerror(-r));
		}
		rep->flags = DND_TF_HASH;
	}
	/* The sender re-reads its source before it sends the trailer. */
	wait = session_hash_wait(s, total);
	net_tune(s->sock[0], wait);
	r = proto_recv_end(s->sock[0], true, &t, why, sizeof(why));
	if (r == -EBADMSG && !chan_err(s->sock[0])[0])
		return session_fail(s, "bad trailer from the sender: %s", why);
	if (r)
		return session_recv_failed(s, r, "sender's trailer", wait);
	if (s->n > 1 && t.flags & DND_TF_HASH && recv_ranges(s, &t, wait))
		return 1;
	/* Keyed, the sender's close_notify: a cut before it lands nothing.
	 * A dnd serve session sends its own after its report. */
	r = s->o->link && (!s->o->tls || !s->o->link->server) ? 0 :
	    proto_recv_eof(s->sock[0]);
	if (r == -EBADMSG && chan_err(s->sock[0])[0])
		return session_recv_failed(s, r, "end of the sender's stream",
					   wait);
	if (r == -EBADMSG) {
		rep->status = DND_ST_MALFORMED;
		return session_fail(s, "malformed stream from the peer: bytes "
				    "after the sender's trailer; %s was not "
				    "written", session_name(s));
	}
	if (r)
		return session_recv_failed(s, r, "end of the sender's stream",
					   wait);
	if (t.status == DND_ST_CHANGED) {
		rep->status = DND_ST_CHANGED;
		return session_fail(s, "the sender's source changed while it "
				    "was read; %s was not written: send it "
				    "again once the source is still",
				    session_name(s));
	}
	if (t.bytes != total) {
		rep->status = DND_ST_SHORT;
		return session_fail(s, "the sender says it sent %llu bytes, "
				    "%llu arrived", (unsigned long long)t.bytes,
				    (unsigned long long)total);
	}
	if (s->range_st[0] && t.flags & DND_TF_HASH &&
	    recv_range_compare(s, rep))
		return 1;
	if (s->range_st[0])
		rep->hash = t.hash;
	if (t.flags & rep->flags & DND_TF_HASH && t.hash != rep->hash) {
		rep->status = DND_ST_MISMATCH;
		return session_fail(s, "hash mismatch: sent xxh3 %016llx, "
				    "landed %016llx; %s was not written",
				    (unsigned long long)t.hash,
				    (unsigned long long)rep->hash, session_name(s));
	}
	/* The receiver decides what it accepts: a file it was asked to
	 * verify lands only against the sender's hash. */
	if (rep->flags & DND_TF_HASH && !(t.flags & DND_TF_HASH)) {
		rep->status = DND_ST_NOHASH;
		return session_fail(s, "the sender sent no hash (it ran with "
				    "--no-verify), so nothing could be "
				    "verified; %s was not written (receive "
				    "with --no-verify to accept unverified "
				    "data)", session_name(s));
	}
	session_verdict(s, rep, &t);
	return 0;
}

/* The receiver's sync line: what made the landed file durable. */
static void recv_sync_note(struct session *s)
{
	snprintf(s->res.sync, sizeof(s->res.sync), "%s%sfdatasync, %s",
		 s->o->sync_every ? "writeback started every " : "",
		 s->o->sync_every ? "--sync stream step, then " : "",
		 s->land.in_place ? "rewritten in place" :
		 "renamed, directory fsynced");
}

/* Verified: the data becomes the target, which ends the total. 0, or 1
 * with rep's status set. */
static int recv_commit(struct session *s, struct dnd_end *rep)
{
	char err[256];
	int r;

	recv_sync_note(s);
	r = land_commit(&s->land, s->start + xfer_done(&s->t), err,
			sizeof(err));
	s->end.fd = -1;
	if (r && !s->land.landed) {
		rep->status = DND_ST_IOERR;
		return session_fail(s, "%s", err);
	}
	session_total(s, s->land.in_place ? "file rewritten in place" :
		      "rename and directory fsync");
	if (r) {
		snprintf(s->res.warning, sizeof(s->res.warning), "%s", err);
		log_err("warning: %s", err);
	}
	return 0;
}

/*
 * A failure once the header came: the sender hears our reason in the
 * answer it waits for, the accept or the reply, rather than guessing from
 * a closed connection. Mid-payload it is still sending, so the reply must
 * reach its side before our close() resets the connection.
 */
static void recv_tell(struct session *s, struct dnd_end *rep)
{
	struct dnd_accept a = { .status = DND_ST_REFUSED };

	if (s->owe == SESSION_OWE_ACCEPT) {
		snprintf(a.reason, sizeof(a.reason), "%s", s->res.error);
		proto_send_accept(s->sock[0], &a);
	} else if (s->owe == SESSION_OWE_REPLY) {
		rep->status = rep->status ? rep->status : DND_ST_IOERR;
		snprintf(rep->reason, sizeof(rep->reason), "%s", s->res.error);
		if (proto_send_end(s->sock[0], false, rep) == 0)
			net_deliver(s->sock[0], 1);
	}
	s->owe = SESSION_OWE_NONE;
}

/* Everything after the header's accept up to the reply. 0 or 1. */
static int recv_talk(struct session *s, struct dnd_end *rep)
{
	const struct session_opts *o = s->o;
	int r;

	if (recv_open(s) || session_recv_streams(s))
		return 1;
	close(s->lfd);
	s->lfd = -1;
	if (recv_hash_plan(s) || session_setup_method(s))
		return 1;
	if (session_payload(s) || session_stopped(s))
		return 1;	/* session_cleanup() stops the re-read */
	if (recv_verify(s, rep) || session_stopped(s))
		return 1;
	if (s->end.landing && recv_commit(s, rep))
		return 1;
	if (!s->end.landing)
		session_total(s, "verdict");
	s->owe = SESSION_OWE_NONE;
	r = proto_send_end(s->sock[0], false, rep);
	/* dnd serve's report follows; then its close_notify. */
	if (!r && !(o->link && o->link->server))
		session_close_write(s);
	if (r) {
		/* Landed and verified: the exit code follows the disk. */
		snprintf(s->res.warning, sizeof(s->res.warning), "landed and "
			 "verified, but the sender did not get the "
			 "confirmation: %s", strerror(-r));
		log_err("warning: %s", s->res.warning);
	}
	return 0;
}

int session_recv(struct session *s)
{
	const struct session_opts *o = s->o;
	struct dnd_end rep = { 0 };
	char err[256];

	/* The method's buffers are touched before any sender waits on us
	 * (on this VM 32 MiB of --direct buffers took 55-120 ms after the
	 * accept); the listener queues a sender that connects meanwhile. */
	if (!o->link && recv_listen(s))
		return 1;
	xfer_ready(&s->cfg);
	if (o->link ? session_link_open(s) : session_recv_first(s))
		return 1;
	if (o->raw) {
		s->join[0].len = UINT64_MAX;
		if (s->end.landing &&
		    land_open(&s->land, o->file, o->overwrite, o->truncate,
			      err, sizeof(err)))
			return session_fail(s, "%s", err);
		s->end.fd = s->end.landing ? s->land.fd : s->end.fd;
		if (session_stream_fd(s, 0) || session_setup_method(s) ||
		    session_payload(s) || session_stopped(s))
			return 1;
		session_unchecked(s);
		if (!s->end.landing)
			session_total(s, "last byte");
		return s->end.landing && recv_commit(s, &rep);
	}
	if (recv_talk(s, &rep)) {
		recv_tell(s, &rep);
		return 1;
	}
	return 0;
}

/*
 * The longest run of landed bytes from the start of the file: stream by
 * stream in offset order, stopping at the first that did not finish its
 * range (what came after a gap is not kept).
 */
static uint64_t recv_prefix(const struct session *s)
{
	uint64_t at = s->start;
	unsigned int i;

	for (i = 0; s->t.st && i < s->n; i++) {
		at += s->t.st[i].done;
		if (s->t.st[i].done < s->join[i].len)
			break;
	}
	return at;
}

int session_keep(struct session *s)
{
	char err[256];
	uint64_t prefix = recv_prefix(s);

	if (!s->land.tmp || !s->end.known || !prefix || !s->ident)
		return 1;
	if (land_keep(&s->land, s->ident, s->end.len, prefix, err,
		      sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	log_err("kept %llu bytes for --resume", (unsigned long long)prefix);
	return 0;
}
