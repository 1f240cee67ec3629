// SPDX-License-Identifier: MIT
/*
 * The sender's dialogue (proto.h): header, the receiver's accept (with a
 * kept prefix to resume from, checked against our own bytes), the plan,
 * one join per stream, the payload through the driver, then the trailer
 * and the receiver's verdict.
 */
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/sparse.h"
#include "xfer/method.h"
#include "xfer/session_link.h"
#include "xfer/session_types.h"

/* Connects one stream. 0 or 1. */
static int send_connect(struct session *s, unsigned int i)
{
	const struct session_opts *o = s->o;
	char err[256], peer[96];
	int fd;

	fd = net_connect(o->host, o->port, (int)o->window, true,
			 o->connect_timeout, o->timeout, peer, sizeof(peer),
			 err, sizeof(err));
	if (fd < 0)
		return session_fail(s, "%s", err);
	s->sock[i] = fd;
	if (!i) {
		snprintf(s->res.peer, sizeof(s->res.peer), "%s", peer);
		io_stop_fd = fd;
	}
	if (net_tune(fd, o->timeout))
		return session_fail(s, "cannot set socket options: %s",
				    strerror(errno));
	if (o->tls && session_hello(s, fd, false, err, sizeof(err)))
		return session_fail(s, "%s", err);
	return 0;
}

/*
 * What the source is, for --resume on the other side: size, modification
 * time, device and inode hashed together (any change means start over);
 * /dev/zero is its length; a pipe has none (0).
 */
static uint64_t send_ident(const struct session *s)
{
	const struct endpoint *e = &s->end;
	const struct stat *st = &e->st;	/* at open: see send_still() */
	uint64_t v[6];

	if (e->ep == DND_EP_ZERO)
		return XXH3_64bits_withSeed("zero", 4, e->len) | 1;
	if (e->ep != DND_EP_FILE)
		return 0;
	v[0] = (uint64_t)st->st_size;
	v[1] = (uint64_t)st->st_mtim.tv_sec;
	v[2] = (uint64_t)st->st_mtim.tv_nsec;
	v[3] = (uint64_t)st->st_dev;
	v[4] = (uint64_t)st->st_ino;
	v[5] = (uint64_t)e->start;
	return XXH3_64bits(v, sizeof(v)) | 1;
}

/* Our hash of [0, n) of the payload, or 1 when we have none. */
static int send_prefix_hash(struct session *s, uint64_t n, uint64_t *h)
{
	const struct endpoint *e = &s->end;
	int r;

	if (e->ep == DND_EP_ZERO) {
		*h = hash_zeros(n);
		return 0;
	}
	r = hash_fd(e->fd, e->start, n, h);
	if (r)
		return session_fail(s, "cannot re-read %s to compare the "
				    "receiver's kept prefix: %s", session_name(s),
				    strerror(-r));
	return 0;
}

/* The source's data extents; *sparse when it has holes to leave out (a
 * file of one extent, all data, goes dense). 0 or 1. */
static int send_extents(struct session *s, bool *sparse)
{
	const struct endpoint *e = &s->end;
	int r = sparse_scan(e->fd, e->start, e->len, &s->ext, &s->n_ext);

	if (r)
		return session_fail(s, "cannot find the holes of %s "
				    "(SEEK_DATA/SEEK_HOLE): %s; send it with "
				    "--no-sparse", session_name(s),
				    strerror(-r));
	*sparse = !(s->n_ext == 1 && s->ext[0].off == 0 &&
		    s->ext[0].len == e->len);
	return 0;
}

/* Header out, accept in, plan out: decides where the payload starts. */
static int send_open(struct session *s)
{
	const struct endpoint *e = &s->end;
	struct dnd_hdr h = {
		.version = DND_PROTO_VERSION,
		.flags = e->known ? 0 : DND_HF_SEGMENTED,
		.streams = (uint16_t)s->n,
		.length = e->known ? e->len : 0,
		.xfer_id = s->xfer_id,
		.ident = send_ident(s),
	};
	struct dnd_plan p = { 0 };
	struct dnd_accept a;
	bool sparse = false;
	uint64_t mine;
	char why[320];
	int r;

	s->sparse_ok = e->ep == DND_EP_FILE && e->known && s->o->sparse &&
		       s->o->m->flags & DND_M_SEEKS && !s->o->direct;
	if (s->sparse_ok)
		h.flags |= DND_HF_SPARSE;
	if (session_sent(s, proto_send_hdr(s->sock[0], &h), "header"))
		return 1;
	r = proto_recv_accept(s->sock[0], &a, why, sizeof(why));
	if (r == -EPROTOTYPE)
		return session_fail(s, "%s", why);
	if (r == -EBADMSG)
		return session_fail(s, "receiver's answer: %s", why);
	if (r)
		return session_recv_failed(s, r, "receiver's answer",
					   s->o->timeout);
	if (a.status != DND_ST_OK)
		return session_fail(s, "the receiver refused the transfer: %s",
				    a.reason[0] ? a.reason :
				    proto_status_name(a.status));
	if (a.flags & DND_AF_RESUME) {
		/* The receiver's bytes must be ours: compare before trusting
		 * them, or start over and say why. */
		if (a.resume_from > h.length ||
		    send_prefix_hash(s, a.resume_from, &mine))
			return a.resume_from > h.length ?
			       session_fail(s, "the receiver keeps %llu bytes of "
					    "a %llu-byte source",
					    (unsigned long long)a.resume_from,
					    (unsigned long long)h.length) : 1;
		if (mine == a.prefix_hash)
			p.start = a.resume_from;
		else
			p.flags = DND_PF_MISMATCH;
	}
	if (s->o->m->flags & DND_M_ACKWAIT)
		p.flags |= DND_PF_ACKNOW;
	if (s->sparse_ok && a.flags & DND_AF_SPARSE && send_extents(s, &sparse))
		return 1;
	if (sparse)
		p.flags |= DND_PF_SPARSE;
	s->start = p.start;
	s->peer_verifies = a.flags & DND_AF_VERIFY;
	if (session_sent(s, proto_send_plan(s->sock[0], &p), "plan"))
		return 1;
	s->sparse = sparse;
	return sparse && session_sent(s, proto_send_extents(s->sock[0], s->ext,
							    s->n_ext),
				      "extents");
}

/* The receiver's reply said the data did not land. */
static int send_refused(struct session *s, const struct dnd_end *rep,
			uint64_t total)
{
	if (rep->status == DND_ST_NOHASH)
		return session_fail(s, "the receiver refused the data: it "
				    "verifies and this sender sent no hash "
				    "(--no-verify here needs --no-verify there)");
	if (rep->reason[0])
		return session_fail(s, "the receiver failed: %s", rep->reason);
	return session_fail(s, "the receiver refused the data: %s (%llu "
			    "bytes landed of %llu sent)",
			    proto_status_name(rep->status),
			    (unsigned long long)rep->bytes,
			    (unsigned long long)total);
}

int session_send_heard(struct session *s)
{
	struct dnd_end rep;
	char why[160];

	if (s->o->raw || s->sock[0] < 0)
		return 0;
	net_tune(s->sock[0], 1);
	if (proto_recv_end(s->sock[0], false, &rep, why, sizeof(why)) ||
	    rep.status == DND_ST_OK)
		return 0;
	return send_refused(s, &rep, s->start + xfer_done(&s->t));
}

/*
 * -P N: one read of the source feeds the whole file's hash (the trailer's,
 * what xxhsum -H3 says) and each stream's range's (s->range_hash, what a
 * receiver verifying as received compares, range by range). 0 or 1.
 */
static int send_range_hashes(struct session *s, struct dnd_end *t)
{
	const struct endpoint *e = &s->end;
	XXH3_state_t *all = XXH3_createState(), *one = XXH3_createState();
	unsigned int i;
	int r = all && one ? 0 : -ENOMEM;

	if (!r) {
		XXH3_64bits_reset(all);
		r = hash_fd_into(all, e->fd, e->start, s->start);
	}
	for (i = 0; i < s->n && !r; i++) {
		XXH3_64bits_reset(one);
		r = hash_fd_into2(all, one, e->fd,
				  e->start + (off_t)s->join[i].offset,
				  s->join[i].len);
		s->range_hash[i] = XXH3_64bits_digest(one);
	}
	if (!r)
		t->hash = XXH3_64bits_digest(all);
	XXH3_freeState(all);
	XXH3_freeState(one);
	if (r)
		return session_fail(s, "cannot re-read %s to hash it: %s",
				    session_name(s), strerror(-r));
	return 0;
}

/*
 * The sender's hash of the whole payload, when the receiver will compare
 * it: inline, or else re-read (a file) or computed (/dev/zero); with N > 1
 * streams each range's too.
 */
static int send_source_hash(struct session *s, struct dnd_end *t)
{
	const struct endpoint *e = &s->end;
	unsigned int i;

	t->bytes = s->start + xfer_done(&s->t);
	if (!s->o->verify || !s->peer_verifies)
		return 0;
	if (s->hash) {
		t->hash = XXH3_64bits_digest(s->hash);
		t->flags = DND_TF_HASH;
	} else if (e->ep == DND_EP_FILE && s->n > 1) {
		if (send_range_hashes(s, t))
			return 1;
		t->flags = DND_TF_HASH;
	} else if (e->ep == DND_EP_FILE || e->ep == DND_EP_ZERO) {
		if (send_prefix_hash(s, t->bytes, &t->hash))
			return 1;
		t->flags = DND_TF_HASH;
		for (i = 0; s->n > 1 && i < s->n; i++)
			s->range_hash[i] = hash_zeros(s->join[i].len);
	}
	return 0;
}

/*
 * Hashes the payload as it passes, for a receiver that compares: a stream
 * source must be (it cannot be read twice); a file is, instead of being
 * re-read after the payload, when its bytes pass through user memory in
 * file order (one stream from offset 0). /dev/zero is hashed after:
 * inline would cost the same, inside the timed window. Any other file is
 * re-read after the payload: a thread re-reading it during the payload
 * (sendfile, splice; 1 GiB hot, pinned, 5 alternating rounds) made the
 * total slower, not faster (sendfile>rw 1.088 -> 1.140 s, splice>rw
 * 1.098 -> 1.178 s): on 2 CPUs the pass competes with the data path.
 * 0 or 1.
 */
static int send_hash_start(struct session *s)
{
	bool file = s->end.ep == DND_EP_FILE && s->n == 1 && !s->start &&
		    s->o->m->flags & DND_M_USERBUF;

	if (!s->o->verify || !s->peer_verifies ||
	    !(s->cfg.hash_stream || file))
		return 0;
	s->hash = XXH3_createState();
	if (!s->hash)
		return session_fail(s, "out of memory");
	XXH3_64bits_reset(s->hash);
	return 0;
}

/* Whether the source's extents differ from those sent: data where a hole
 * was sent as one (or the scan failing) is a change. */
static bool send_extents_moved(const struct session *s)
{
	const struct endpoint *e = &s->end;
	struct dnd_extent *now;
	uint32_t n;
	bool moved;

	if (sparse_scan(e->fd, e->start, e->len, &now, &n))
		return true;
	moved = n != s->n_ext ||
		(n && memcmp(now, s->ext, n * sizeof(*now)));
	free(now);
	return moved;
}

/*
 * After the last read of the source (the payload, a re-read for the hash)
 * and before the trailer vouches for it. A file rewritten in place while
 * it was read sends old and new bytes mixed; hashed as they passed, both
 * ends would call that verified. The same check covers every method,
 * -P N (one inode under all streams) and dnd serve's pulls. Returns
 * DND_ST_OK, or DND_ST_CHANGED with the session failed, for the trailer
 * to fail the receiver too.
 */
static uint16_t send_still(struct session *s)
{
	const char *name = session_name(s);
	char what[32];
	int r = endpoint_changed(&s->end, what, sizeof(what));

	if (!r && s->sparse && send_extents_moved(s)) {
		snprintf(what, sizeof(what), "its holes moved");
		r = 1;
	}

	if (!r)
		return DND_ST_OK;
	if (r < 0)
		session_fail(s, "cannot tell whether %s changed while it was "
			     "read: fstat: %s; nothing landed", name,
			     strerror(-r));
	else
		session_fail(s, "%s changed while it was read (%s); nothing "
			     "landed: send it again once it is still", name,
			     what);
	return DND_ST_CHANGED;
}

/* After the payload: trailer out, the receiver's reply in. 0 or 1. */
static int send_end(struct session *s)
{
	struct dnd_end t = { 0 }, rep;
	unsigned int i;
	double wait;
	char err[256];
	int r;

	if (session_stopped(s) || send_source_hash(s, &t))
		return 1;
	t.status = send_still(s);
	r = proto_send_end(s->sock[0], true, &t);
	/* On stream 0 after the trailer, under its TLS as the trailer is. */
	if (!r && s->n > 1 && t.flags & DND_TF_HASH) {
		s->range_hash[s->n] = proto_ranges_bind(t.hash, s->range_hash,
							s->n);
		r = proto_send_ranges(s->sock[0], s->range_hash, s->n);
	}
	if (r && (r == -EPIPE || r == -ECONNRESET) && session_send_heard(s))
		return 1;
	if (session_sent(s, r, "trailer"))
		return 1;
	/* Keyed, the trailer's end is TLS's close_notify (a dnd serve
	 * session's after its report); dnd serve's report follows the reply
	 * on stream 0. */
	if (!s->o->link || !s->o->link->server)
		session_close_write(s);
	for (i = s->o->link ? 1 : 0; i < s->n; i++)
		shutdown(s->sock[i], SHUT_WR);
	/* The receiver re-reads what landed before it answers. */
	wait = session_hash_wait(s, t.bytes);
	net_tune(s->sock[0], wait);
	r = proto_recv_end(s->sock[0], false, &rep, err, sizeof(err));
	if (t.status)
		return 1;	/* the reply only echoes it */
	if (r == -EBADMSG && !chan_err(s->sock[0])[0])
		return session_fail(s, "receiver's reply: %s", err);
	if (r && chan_err(s->sock[0])[0])	/* TLS: the data is suspect */
		return session_recv_failed(s, r, "receiver's reply", wait);
	if (r) {
		/* All was sent: only the confirmation is missing. */
		session_recv_failed(s, r, "receiver's reply", wait);
		snprintf(s->res.warning, sizeof(s->res.warning), "the data "
			 "may have landed: check the receiver's side");
		log_err("the data may have landed: check the receiver's side");
		return 1;
	}
	if (rep.status != DND_ST_OK)
		return send_refused(s, &rep, t.bytes);
	if (rep.bytes != t.bytes ||
	    (t.flags & rep.flags & DND_TF_HASH && t.hash != rep.hash))
		return session_fail(s, "the receiver's count or hash differs "
				    "from what was sent");
	session_total(s, "receiver's confirmation");
	session_verdict(s, &t, &rep);
	return 0;
}

/*
 * Connects every stream but the first (a dnd serve client: to the
 * session's streams port, opening each with its join; a dnd serve
 * session: the client connects, we accept), each with its own file
 * description of the source. 0 or 1.
 */
static int send_streams(struct session *s)
{
	const struct session_link *l = s->o->link;
	unsigned int i;

	if (l && l->server && s->n > 1 && session_link_streams(s, false))
		return 1;
	for (i = 0; i < s->n; i++) {
		if (i && !l && send_connect(s, i))
			return 1;
		if (i && l && !l->server && session_link_connect(s, i))
			return 1;
		if (session_stream_fd(s, i))
			return 1;
	}
	return 0;
}

/*
 * Introduces every stream (a dnd serve client's streams i > 0 opened with
 * theirs at connect). The receiver's clock starts once all have
 * joined, so this comes after the method is set up (registering io_uring
 * buffers, say): that cost is not the data path's.
 */
static int send_joins(struct session *s)
{
	const struct session_link *l = s->o->link;
	unsigned int i;

	for (i = 0; !s->o->raw && i < s->n; i++)
		if ((!i || !l || l->server) && session_join_send(s, i))
			return 1;
	return 0;
}

int session_send(struct session *s)
{
	const struct session_opts *o = s->o;

	s->n = o->streams ? o->streams : 1;
	if (getrandom(&s->xfer_id, sizeof(s->xfer_id), 0) !=
	    sizeof(s->xfer_id))
		return session_fail(s, "getrandom: %s", strerror(errno));
	if ((o->link ? session_link_open(s) : send_connect(s, 0)) ||
	    (!o->raw && send_open(s)) || (!o->raw && send_hash_start(s)))
		return 1;
	session_split(s, s->end.known ? s->end.len : 0);
	if (send_streams(s) || session_setup_method(s) || send_joins(s))
		return 1;
	if (session_payload(s))
		return 1;
	if (o->raw) {
		session_unchecked(s);
		shutdown(s->sock[0], SHUT_WR);
		return 0;
	}
	return send_end(s);
}
