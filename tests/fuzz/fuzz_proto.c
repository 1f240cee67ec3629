// SPDX-License-Identifier: MIT
/* libFuzzer: every decoder of dnd's wire format (proto.h) with a re-encoding
 * oracle, then the input as stream 0 read off a socket the way a receiver
 * does, which must agree with the decoders message by message, as the
 * accept and the reply a sender reads (with their reasons), and as the
 * report dnd serve sends its client. */
#include <sys/socket.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proto.h"
#include "core/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

#define WHY	160

/* A heap copy of exactly n bytes (zero-padded), so ASan sees overreads. */
static uint8_t *exact(const uint8_t *d, size_t size, size_t n)
{
	uint8_t *p = calloc(1, n);

	if (!p)
		abort();
	memcpy(p, d, size < n ? size : n);
	return p;
}

/* Whether a decoder refused; a refusal's reason fits its buffer and says
 * something. -EPROTOTYPE: the bytes are a dnd serve client's. */
static bool refused(int r, const char *why, size_t len)
{
	if (r && ((r != -EBADMSG && r != -EPROTOTYPE) || !memchr(why, 0, len) ||
		  (len > 1 && !why[0])))
		abort();
	return r;
}

/* Decoded messages re-encode to the very bytes: each has one encoding. */
static void same(const uint8_t *a, const uint8_t *b, size_t n)
{
	if (memcmp(a, b, n))
		abort();
}

static void fuzz_hdr(const uint8_t *in, char *why, size_t wl)
{
	uint8_t out[DND_HDR_LEN];
	struct dnd_hdr h;
	int r = proto_get_hdr(in, &h, why, (unsigned int)wl);

	if (refused(r, why, wl))
		return;
	if (h.version != DND_PROTO_VERSION || h.flags & ~(DND_HF_SEGMENTED | DND_HF_SPARSE) ||
	    (h.flags & DND_HF_SEGMENTED && h.flags & DND_HF_SPARSE) ||
	    h.length > DND_LEN_MAX || !h.streams ||
	    h.streams > DND_STREAMS_MAX ||
	    (h.flags & DND_HF_SEGMENTED && (h.length || h.streams != 1)))
		abort();
	proto_put_hdr(out, &h);
	same(out, in, DND_HDR_LEN);
}

static bool fuzz_accept(const uint8_t *in, char *why, size_t wl)
{
	uint8_t out[DND_MSG_LEN];
	struct dnd_accept a;
	int r = proto_get_accept(in, &a, why, (unsigned int)wl);

	if (refused(r, why, wl))
		return false;
	if (a.status > DND_ST_MAX ||
	    a.flags & ~(DND_AF_RESUME | DND_AF_VERIFY | DND_AF_SPARSE) ||
	    a.resume_from > DND_LEN_MAX ||
	    (!(a.flags & DND_AF_RESUME) && (a.resume_from || a.prefix_hash)))
		abort();
	proto_put_accept(out, &a);
	same(out, in, DND_MSG_LEN);
	return true;
}

static bool fuzz_plan(const uint8_t *in, char *why, size_t wl)
{
	uint8_t out[DND_MSG_LEN];
	struct dnd_plan p;
	int r = proto_get_plan(in, &p, why, (unsigned int)wl);

	if (refused(r, why, wl))
		return false;
	if (p.flags & ~(DND_PF_MISMATCH | DND_PF_ACKNOW | DND_PF_SPARSE) ||
	    p.start > DND_LEN_MAX)
		abort();
	proto_put_plan(out, &p);
	same(out, in, DND_MSG_LEN);
	return true;
}

static void fuzz_join(const uint8_t *in, char *why, size_t wl)
{
	uint8_t out[DND_JOIN_LEN];
	struct dnd_join j;
	int r = proto_get_join(in, &j, why, (unsigned int)wl);

	if (refused(r, why, wl))
		return;
	if (!j.streams || j.streams > DND_STREAMS_MAX || j.index >= j.streams ||
	    j.offset > DND_LEN_MAX || j.len > DND_LEN_MAX - j.offset)
		abort();
	proto_put_join(out, &j);
	same(out, in, DND_JOIN_LEN);
}

static bool fuzz_end(const uint8_t *in, bool trailer, char *why, size_t wl)
{
	uint8_t out[DND_MSG_LEN];
	struct dnd_end e;
	int r = proto_get_end(in, trailer, &e, why, (unsigned int)wl);

	if (refused(r, why, wl))
		return false;
	if (e.flags & ~DND_TF_HASH || e.status > DND_ST_MAX ||
	    e.bytes > DND_LEN_MAX || !proto_status_name(e.status))
		abort();
	proto_put_end(out, trailer, &e);
	same(out, in, DND_MSG_LEN);
	return true;
}

static void fuzz_seg(const uint8_t *in)
{
	uint8_t out[DND_SEG_HDR_LEN];
	uint64_t n;
	int r = proto_get_seg(in, &n);

	if ((r == 0) != (n <= DND_SEG_MAX) || (r && r != -EBADMSG))
		abort();
	proto_put_seg(out, n);
	same(out, in, DND_SEG_HDR_LEN);
}

/*
 * The ranges' hashes, for the count the input's head claims and for one
 * from its size: decoded only for that very count and length, and then
 * re-encoded to the very bytes.
 */
static void fuzz_ranges(const uint8_t *d, size_t size, char *why, size_t wl)
{
	unsigned int ns[2] = { size >= 6 ? (unsigned int)d[4] << 8 | d[5] : 0,
			       (unsigned int)(size % 70) };
	uint8_t out[DND_RANGES_LEN_MAX];
	uint64_t h[DND_STREAMS_MAX + 1];
	unsigned int k, n;

	for (k = 0; k < 2; k++) {
		n = ns[k];
		if (refused(proto_get_ranges(d, size, n, h, why,
					     (unsigned int)wl), why, wl))
			continue;
		if (n < 2 || n > DND_STREAMS_MAX ||
		    size != DND_RANGES_HEAD_LEN + 8 * ((size_t)n + 1) ||
		    proto_put_ranges(out, h, n) != size)
			abort();
		same(out, d, size);
	}
}

/*
 * The extents after a sparse plan, decoded as the receiver's loop does
 * against a file of length bytes: the count (at most DND_EXTENTS_MAX),
 * then each extent non-empty, past the one before by a byte at least and
 * inside the length; each re-encodes to its very bytes. Returns what
 * proto_recv_extents() must say of these bytes: 0, -EBADMSG, or -ENODATA
 * when a piece it reads whole (4096 extents) is cut short.
 */
#define EXT_PIECE	4096

static int fuzz_extents(const uint8_t *d, size_t size, uint64_t length,
			char *why, size_t wl)
{
	uint8_t *hd = exact(d, size, DND_EXTENTS_HEAD_LEN);
	uint8_t out[DND_EXTENT_LEN];
	struct dnd_extent e;
	uint64_t after = 0;
	uint32_t n, i, end;
	size_t at = DND_EXTENTS_HEAD_LEN;
	int r = proto_get_extents_head(hd, &n, why, (unsigned int)wl);

	free(hd);
	if (size < DND_EXTENTS_HEAD_LEN)
		return -ENODATA;
	if (refused(r, why, wl))
		return r;
	if (n > DND_EXTENTS_MAX)
		abort();
	proto_put_extents_head(out, n);
	same(out, d, DND_EXTENTS_HEAD_LEN);
	for (i = 0; i < n; i = end) {
		end = n - i < EXT_PIECE ? n : i + EXT_PIECE;
		if (size - at < (size_t)(end - i) * DND_EXTENT_LEN)
			return -ENODATA;
		for (; i < end; i++, at += DND_EXTENT_LEN) {
			r = proto_get_extent(d + at, after, length, &e, why,
					     (unsigned int)wl);
			if (refused(r, why, wl))
				return r;
			if (!e.len || e.off < after || e.off + e.len > length)
				abort();
			proto_put_extent(out, &e);
			same(out, d + at, DND_EXTENT_LEN);
			after = e.off + e.len + 1;
		}
	}
	return 0;
}

/* A decoded reason is printable ASCII and re-encodes to the very bytes. */
static void fuzz_reason(const uint8_t *d, size_t size, char *why, size_t wl)
{
	uint8_t *h = exact(d, size, DND_REASON_HEAD_LEN);
	uint8_t out[DND_REASON_HEAD_LEN + DND_REASON_MAX];
	char text[DND_REASON_MAX + 1];
	size_t n, i;

	/* Any length, straight from the input: too long is refused. */
	if (!refused(proto_get_reason(d, size, text, why, (unsigned int)wl),
		     why, wl) && (size > DND_REASON_MAX || strlen(text) != size))
		abort();
	if (!refused(proto_get_reason_len(h, &n, why, (unsigned int)wl), why,
		     wl) && size >= DND_REASON_HEAD_LEN + n &&
	    !refused(proto_get_reason(d + DND_REASON_HEAD_LEN, n, text, why,
				      (unsigned int)wl), why, wl)) {
		for (i = 0; i < n; i++)
			if (text[i] < 0x20 || text[i] > 0x7e)
				abort();
		if (n > DND_REASON_MAX || text[n] ||
		    proto_put_reason(out, text) != DND_REASON_HEAD_LEN + n)
			abort();
		same(out, d, DND_REASON_HEAD_LEN + n);
	}
	free(h);
}

/* Each decoder on the input, with a roomy and a tight reason buffer. */
static void fuzz_decoders(const uint8_t *d, size_t size, size_t wl)
{
	uint8_t *h = exact(d, size, DND_HDR_LEN);
	uint8_t *m = exact(d, size, DND_MSG_LEN);
	uint8_t *j = exact(d, size, DND_JOIN_LEN);
	uint8_t *s = exact(d, size, DND_SEG_HDR_LEN);
	char *why = malloc(wl);
	int kinds;

	if (!why)
		abort();
	fuzz_hdr(h, why, wl);
	fuzz_join(j, why, wl);
	fuzz_seg(s);
	fuzz_reason(d, size, why, wl);
	fuzz_ranges(d, size, why, wl);
	fuzz_extents(d, size, (uint64_t)size << 12, why, wl);
	/* One 24-byte message is at most one kind: the magic says which. */
	kinds = fuzz_accept(m, why, wl) + fuzz_plan(m, why, wl) +
		fuzz_end(m, true, why, wl) + fuzz_end(m, false, why, wl);
	if (kinds > 1)
		abort();
	free(why);
	free(h);
	free(m);
	free(j);
	free(s);
}

/* Reads and drops n payload bytes; false at the end of the data. */
static bool skip(int fd, uint64_t n)
{
	char buf[4096];

	while (n) {
		ssize_t r = recv(fd, buf, n < sizeof(buf) ? n : sizeof(buf), 0);

		if (r <= 0)
			return false;
		n -= (uint64_t)r;
	}
	return true;
}

/* A socket reader returns what its decoder says about the same bytes, or
 * -ENODATA exactly when fewer than n were left (r2 is then unused): false
 * to stop reading. */
static bool agree(int r, size_t at, size_t n, size_t size, int r2)
{
	if (size - at < n) {
		if (r != -ENODATA)
			abort();
		return false;
	}
	if (r != r2)
		abort();
	return !r;
}

/* Whether n bytes are left at at, so a decoder may look at them. */
#define LEFT(n)	(size - at >= (n))

/* The segments after the join, as the receiver reads them; the offset after
 * the end marker, or 0 to stop. */
static size_t fuzz_segments(int fd, const uint8_t *d, size_t size, size_t at)
{
	struct dnd_syscalls sc = { 0 };

	for (;;) {
		uint8_t *c = exact(d + at, size - at, DND_SEG_HDR_LEN);
		uint64_t n, n2 = 0;
		int r2 = proto_get_seg(c, &n2);
		int r = proto_recv_seg(&sc, fd, &n);

		free(c);
		if (!agree(r, at, DND_SEG_HDR_LEN, size, r2))
			return 0;
		if (n != n2)
			abort();
		at += DND_SEG_HDR_LEN;
		if (!n)
			return at;
		if (!skip(fd, n))
			return 0;
		at += n;
	}
}

/* Stream 0 as the receiver reads it: header, plan, join, the payload (a
 * length or segments), trailer. */
static void fuzz_stream(int fd, const uint8_t *d, size_t size)
{
	char why[WHY], why2[WHY];
	struct dnd_hdr h, h2;
	struct dnd_plan p, p2;
	struct dnd_join j, j2;
	struct dnd_end e, e2;
	size_t at = 0;
	uint8_t *pad;
	int r, r2;

	/* The header's first 8 bytes are judged alone, so a peer speaking
	 * another version is told so rather than kept waiting. */
	r = proto_recv_hdr(fd, &h, why, sizeof(why));
	pad = exact(d, size, DND_HDR_LEN);
	r2 = proto_get_hdr(pad, &h2, why2, sizeof(why2));
	free(pad);
	if (size >= 8 && r2 && (memcmp(d, "DNDH", 4) || d[4] ||
				d[5] != DND_PROTO_VERSION)) {
		if (r != r2)
			abort();
		return;
	}
	if (!agree(r, at, DND_HDR_LEN, size, r2))
		return;
	if (h.flags != h2.flags || h.length != h2.length ||
	    h.xfer_id != h2.xfer_id || h.ident != h2.ident ||
	    h.streams != h2.streams)
		abort();
	at += DND_HDR_LEN;
	r = proto_recv_plan(fd, &p, why, sizeof(why));
	if (!agree(r, at, DND_MSG_LEN, size, LEFT(DND_MSG_LEN) ?
		   proto_get_plan(d + at, &p2, why2, sizeof(why2)) : 0))
		return;
	if (p.flags != p2.flags || p.start != p2.start)
		abort();
	at += DND_MSG_LEN;
	if (p.flags & DND_PF_SPARSE) {
		struct dnd_extent *ext = NULL;
		uint32_t n = 0;

		r = proto_recv_extents(fd, h.length, &ext, &n, why,
				       sizeof(why));
		if (r != fuzz_extents(d + at, size - at, h.length, why2,
				      sizeof(why2)))
			abort();
		free(ext);
		if (r)
			return;
		at += DND_EXTENTS_HEAD_LEN + DND_EXTENT_LEN * (size_t)n;
	}
	r = proto_recv_join(fd, &j, why, sizeof(why));
	if (!agree(r, at, DND_JOIN_LEN, size, LEFT(DND_JOIN_LEN) ?
		   proto_get_join(d + at, &j2, why2, sizeof(why2)) : 0))
		return;
	if (j.index != j2.index || j.streams != j2.streams ||
	    j.xfer_id != j2.xfer_id || j.offset != j2.offset || j.len != j2.len)
		abort();
	at += DND_JOIN_LEN;
	if (h.flags & DND_HF_SEGMENTED) {
		at = fuzz_segments(fd, d, size, at);
		if (!at)
			return;
	} else {
		if (!skip(fd, j.len))
			return;
		at += j.len;
	}
	r = proto_recv_end(fd, true, &e, why, sizeof(why));
	if (!agree(r, at, DND_MSG_LEN, size, LEFT(DND_MSG_LEN) ?
		   proto_get_end(d + at, true, &e2, why2, sizeof(why2)) : 0))
		return;
	if (e.status != e2.status || e.flags != e2.flags ||
	    e.bytes != e2.bytes || e.hash != e2.hash)
		abort();
	at += DND_MSG_LEN;
	/* N > 1 streams and a hash: the ranges' hashes follow. */
	if (h.streams > 1 && e.flags & DND_TF_HASH) {
		uint64_t rh[DND_STREAMS_MAX + 1], rh2[DND_STREAMS_MAX + 1];
		size_t rl = DND_RANGES_HEAD_LEN + 8 * ((size_t)h.streams + 1);

		r = proto_recv_ranges(fd, h.streams, rh, why, sizeof(why));
		/* A head that is not this count's is refused at once. */
		if (LEFT(DND_RANGES_HEAD_LEN) && !LEFT(rl) &&
		    proto_get_ranges(d + at, DND_RANGES_HEAD_LEN, h.streams,
				     rh2, why2, sizeof(why2)) &&
		    (memcmp(d + at, "DNDK", 4) ||
		     (d[at + 4] << 8 | d[at + 5]) != h.streams)) {
			if (r != -EBADMSG)
				abort();
			return;
		}
		if (!agree(r, at, rl, size, LEFT(rl) ?
			   proto_get_ranges(d + at, rl, h.streams, rh2, why2,
					    sizeof(why2)) : 0))
			return;
		if (memcmp(rh, rh2, 8 * ((size_t)h.streams + 1)))
			abort();
		at += rl;
	}
	if (proto_recv_eof(fd) != (at == size ? 0 : -EBADMSG))
		abort();
}

/*
 * The server's report (dnd serve) as its client reads it, into a buffer of
 * cap bytes: the parts fit it, the bytes are the input's, and they are
 * what proto_put_report() makes of those parts.
 */
static void fuzz_report(int fd, const uint8_t *d, size_t size, size_t cap)
{
	uint8_t *buf = malloc(cap), *out = malloc(cap);
	size_t len = 0, jlen = 0, tlen = 0;
	char why[WHY];
	int r;

	if (!buf || !out)
		abort();
	r = proto_recv_report(fd, buf, cap, &len, &jlen, &tlen, why,
			      sizeof(why));
	if (size < DND_REPORT_HEAD_LEN && r != -ENODATA)
		abort();
	if (r == -ENODATA && size >= DND_REPORT_HEAD_LEN + jlen + tlen &&
	    jlen <= DND_REPORT_MAX && tlen <= DND_REPORT_MAX)
		abort();	/* it was all there */
	if (r && r != -ENODATA)
		refused(r, why, sizeof(why));
	if (!r && (len != DND_REPORT_HEAD_LEN + jlen + tlen || len > cap ||
		   len > size || jlen > DND_REPORT_MAX ||
		   tlen > DND_REPORT_MAX || memcmp(buf, d, len) ||
		   proto_put_report(out, cap, (char *)buf + DND_REPORT_HEAD_LEN,
				    jlen, (char *)buf + DND_REPORT_HEAD_LEN +
				    jlen, tlen) != len ||
		   memcmp(out, d, len)))
		abort();
	free(buf);
	free(out);
}

/*
 * The accept, then the reply, as a sender reads them: a reason comes with
 * a status that is not OK and with no other, and re-encodes to the bytes
 * read. Nothing follows a refusing accept.
 */
static void fuzz_answers(int fd, const uint8_t *d, size_t size, size_t arg)
{
	uint8_t out[2 * DND_ANSWER_MAX];
	struct dnd_accept a;
	struct dnd_end e;
	char why[WHY];
	size_t n = DND_MSG_LEN;
	int r = proto_recv_accept(fd, &a, why, sizeof(why));

	if (r) {
		if (r != -ENODATA)
			refused(r, why, sizeof(why));
		return;
	}
	proto_put_accept(out, &a);
	if (a.status)
		n += proto_put_reason(out + n, a.reason);
	else if (a.reason[0])
		abort();
	if (n > size || memcmp(out, d, n))
		abort();
	if (a.status)
		return;
	r = proto_recv_end(fd, false, &e, why, sizeof(why));
	if (r) {
		if (r != -ENODATA)
			refused(r, why, sizeof(why));
		return;
	}
	if (!e.status && e.reason[0])
		abort();
	n += proto_put_reply(out + n, &e);
	if (n > size || memcmp(out, d, n))
		abort();
}

/* The input, written whole into a fresh socket, read by fn. */
static void over_socket(const uint8_t *d, size_t size,
			void (*fn)(int, const uint8_t *, size_t, size_t),
			size_t arg)
{
	int sp[2];

	/* The whole input must fit in the socket buffer, written at once. */
	if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return;
	if (size && send(sp[1], d, size, 0) != (ssize_t)size)
		abort();
	shutdown(sp[1], SHUT_WR);
	fn(sp[0], d, size, arg);
	close(sp[0]);
	close(sp[1]);
}

static void fuzz_stream_fn(int fd, const uint8_t *d, size_t size, size_t arg)
{
	fuzz_stream(fd, d, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	fuzz_decoders(d, size, WHY);
	fuzz_decoders(d, size, 1 + size % 24);
	over_socket(d, size, fuzz_stream_fn, 0);
	over_socket(d, size, fuzz_answers, 0);
	over_socket(d, size, fuzz_report,
		    DND_REPORT_HEAD_LEN + 2 * DND_REPORT_MAX);
	over_socket(d, size, fuzz_report, DND_REPORT_HEAD_LEN + size % 1024);
	return 0;
}
