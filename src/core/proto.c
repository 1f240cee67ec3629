// SPDX-License-Identifier: MIT
/*
 * dnd's wire format in one place: encoding, strict decoding, and sending
 * and receiving each message; see proto.h.
 */
#include <sys/socket.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/be.h"
#include "core/chan.h"
#include "core/esc.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/log.h"
#include "core/net.h"
#include "core/proto.h"
#include "core/wire.h"

static const char magic_hdr[4] = { 'D', 'N', 'D', 'H' };
static const char magic_trl[4] = { 'D', 'N', 'D', 'T' };
static const char magic_rep[4] = { 'D', 'N', 'D', 'R' };
static const char magic_acc[4] = { 'D', 'N', 'D', 'A' };
static const char magic_plan[4] = { 'D', 'N', 'D', 'P' };
static const char magic_join[4] = { 'D', 'N', 'D', 'J' };
static const char magic_report[4] = { 'D', 'N', 'D', 'Q' };
static const char magic_port[4] = { 'D', 'N', 'D', 'S' };
static const char magic_reason[4] = { 'D', 'N', 'D', 'E' };
static const char magic_ranges[4] = { 'D', 'N', 'D', 'K' };
static const char magic_extents[4] = { 'D', 'N', 'D', 'X' };

void proto_put_hdr(uint8_t out[DND_HDR_LEN], const struct dnd_hdr *h)
{
	memset(out, 0, DND_HDR_LEN);
	memcpy(out, magic_hdr, 4);
	be_put16(out + 4, h->version);
	be_put16(out + 6, h->flags);
	be_put64(out + 8, h->length);
	be_put64(out + 16, h->xfer_id);
	be_put64(out + 24, h->ident);
	be_put16(out + 32, h->streams);
}

int proto_get_hdr(const uint8_t in[DND_HDR_LEN], struct dnd_hdr *h, char *why,
		  unsigned int len)
{
	if (wire_check_client(in, why, len))
		return -EPROTOTYPE;
	/* A dnd peer's bytes never call for --raw. */
	if (memcmp(in, magic_hdr, 4) && !memcmp(in, magic_hdr, 3)) {
		snprintf(why, len, "a dnd message ('DND%c') where the header "
			 "belongs; is the peer a dnd of another version?",
			 isprint(in[3]) ? in[3] : '?');
		return -EBADMSG;
	}
	if (memcmp(in, magic_hdr, 4)) {
		snprintf(why, len, "no dnd magic (first bytes %02x %02x %02x %02x); "
			 "is the peer dnd? use --raw for netcat-style peers",
			 in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	h->version = be_get16(in + 4);
	h->flags = be_get16(in + 6);
	h->length = be_get64(in + 8);
	h->xfer_id = be_get64(in + 16);
	h->ident = be_get64(in + 24);
	h->streams = be_get16(in + 32);
	if (h->version != DND_PROTO_VERSION) {
		snprintf(why, len, "protocol version %u, this dnd speaks %u",
			 h->version, DND_PROTO_VERSION);
		return -EBADMSG;
	}
	if (h->flags & ~(DND_HF_SEGMENTED | DND_HF_SPARSE) ||
	    (h->flags & DND_HF_SEGMENTED && h->flags & DND_HF_SPARSE)) {
		snprintf(why, len, "unknown header flags 0x%x", h->flags);
		return -EBADMSG;
	}
	if (h->length > DND_LEN_MAX ||
	    ((h->flags & DND_HF_SEGMENTED) && h->length)) {
		snprintf(why, len, "impossible payload length %llu",
			 (unsigned long long)h->length);
		return -EBADMSG;
	}
	if (!h->streams || h->streams > DND_STREAMS_MAX ||
	    ((h->flags & DND_HF_SEGMENTED) && h->streams != 1)) {
		snprintf(why, len, "impossible stream count %u", h->streams);
		return -EBADMSG;
	}
	if (!be_zeros(in + 34, DND_HDR_LEN - 34)) {
		snprintf(why, len, "reserved header bytes are not zero");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_accept(uint8_t out[DND_MSG_LEN], const struct dnd_accept *a)
{
	memcpy(out, magic_acc, 4);
	be_put16(out + 4, a->status);
	be_put16(out + 6, a->flags);
	be_put64(out + 8, a->resume_from);
	be_put64(out + 16, a->prefix_hash);
}

int proto_get_accept(const uint8_t in[DND_MSG_LEN], struct dnd_accept *a,
		     char *why, unsigned int len)
{
	a->status = be_get16(in + 4);
	a->flags = be_get16(in + 6);
	a->resume_from = be_get64(in + 8);
	a->prefix_hash = be_get64(in + 16);
	if (memcmp(in, magic_acc, 4) || a->status > DND_ST_MAX ||
	    a->flags & ~(DND_AF_RESUME | DND_AF_VERIFY | DND_AF_SPARSE) ||
	    a->resume_from > DND_LEN_MAX ||
	    (!(a->flags & DND_AF_RESUME) && (a->resume_from || a->prefix_hash))) {
		snprintf(why, len, "malformed accept message");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_plan(uint8_t out[DND_MSG_LEN], const struct dnd_plan *p)
{
	memset(out, 0, DND_MSG_LEN);
	memcpy(out, magic_plan, 4);
	be_put16(out + 6, p->flags);
	be_put64(out + 8, p->start);
}

int proto_get_plan(const uint8_t in[DND_MSG_LEN], struct dnd_plan *p,
		   char *why, unsigned int len)
{
	p->flags = be_get16(in + 6);
	p->start = be_get64(in + 8);
	if (memcmp(in, magic_plan, 4) || be_get16(in + 4) ||
	    p->flags & ~(DND_PF_MISMATCH | DND_PF_ACKNOW | DND_PF_SPARSE) ||
	    p->start > DND_LEN_MAX ||
	    !be_zeros(in + 16, 8)) {
		snprintf(why, len, "malformed plan message");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_join(uint8_t out[DND_JOIN_LEN], const struct dnd_join *j)
{
	memcpy(out, magic_join, 4);
	be_put16(out + 4, j->index);
	be_put16(out + 6, j->streams);
	be_put64(out + 8, j->xfer_id);
	be_put64(out + 16, j->offset);
	be_put64(out + 24, j->len);
}

int proto_get_join(const uint8_t in[DND_JOIN_LEN], struct dnd_join *j,
		   char *why, unsigned int len)
{
	j->index = be_get16(in + 4);
	j->streams = be_get16(in + 6);
	j->xfer_id = be_get64(in + 8);
	j->offset = be_get64(in + 16);
	j->len = be_get64(in + 24);
	if (memcmp(in, magic_join, 4) || !j->streams ||
	    j->streams > DND_STREAMS_MAX || j->index >= j->streams ||
	    j->offset > DND_LEN_MAX || j->len > DND_LEN_MAX - j->offset) {
		snprintf(why, len, "malformed join message");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_port(uint8_t out[DND_PORT_LEN], uint16_t port)
{
	memcpy(out, magic_port, 4);
	be_put16(out + 4, port);
	be_put16(out + 6, 0);
}

int proto_get_port(const uint8_t in[DND_PORT_LEN], uint16_t *port)
{
	*port = be_get16(in + 4);
	if (memcmp(in, magic_port, 4) || be_get16(in + 6) || !*port)
		return -EBADMSG;
	return 0;
}

void proto_put_end(uint8_t out[DND_MSG_LEN], bool trailer,
		   const struct dnd_end *e)
{
	memcpy(out, trailer ? magic_trl : magic_rep, 4);
	be_put16(out + 4, e->status);
	be_put16(out + 6, e->flags);
	be_put64(out + 8, e->bytes);
	be_put64(out + 16, e->hash);
}

int proto_get_end(const uint8_t in[DND_MSG_LEN], bool trailer,
		  struct dnd_end *e, char *why, unsigned int len)
{
	if (memcmp(in, trailer ? magic_trl : magic_rep, 4)) {
		snprintf(why, len, "bad %s magic", trailer ? "trailer" : "reply");
		return -EBADMSG;
	}
	e->status = be_get16(in + 4);
	e->flags = be_get16(in + 6);
	e->bytes = be_get64(in + 8);
	e->hash = be_get64(in + 16);
	/* Status is the receiver's word: a trailer has none but the
	 * sender's own failure. */
	if (e->flags & ~DND_TF_HASH || e->status > DND_ST_MAX ||
	    (trailer && e->status && e->status != DND_ST_CHANGED) ||
	    e->bytes > DND_LEN_MAX) {
		snprintf(why, len, "malformed %s", trailer ? "trailer" : "reply");
		return -EBADMSG;
	}
	return 0;
}

static bool proto_printable(uint8_t c)
{
	return c >= 0x20 && c <= 0x7e;
}

size_t proto_put_reason(uint8_t out[DND_REASON_HEAD_LEN + DND_REASON_MAX],
			const char *text)
{
	char safe[DND_REASON_MAX + 1];
	size_t n = esc_text(safe, sizeof(safe), text, strlen(text), ESC_ASCII);

	memcpy(out, magic_reason, 4);
	be_put16(out + 4, (uint16_t)n);
	be_put16(out + 6, 0);
	memcpy(out + DND_REASON_HEAD_LEN, safe, n);
	return DND_REASON_HEAD_LEN + n;
}

int proto_get_reason_len(const uint8_t in[DND_REASON_HEAD_LEN], size_t *n,
			 char *why, unsigned int len)
{
	*n = be_get16(in + 4);
	if (memcmp(in, magic_reason, 4) || be_get16(in + 6) ||
	    *n > DND_REASON_MAX) {
		snprintf(why, len, "malformed reason");
		return -EBADMSG;
	}
	return 0;
}

/* The peer's words reach a terminal: no control bytes, no escapes. */
int proto_get_reason(const uint8_t *in, size_t n,
		     char text[DND_REASON_MAX + 1], char *why,
		     unsigned int len)
{
	size_t i;

	text[0] = '\0';
	if (n > DND_REASON_MAX) {
		snprintf(why, len, "a reason of %zu bytes", n);
		return -EBADMSG;
	}
	for (i = 0; i < n; i++) {
		if (!proto_printable(in[i])) {
			snprintf(why, len, "a reason with byte 0x%02x", in[i]);
			return -EBADMSG;
		}
		text[i] = (char)in[i];
	}
	text[n] = '\0';
	return 0;
}

size_t proto_put_reply(uint8_t out[DND_ANSWER_MAX], const struct dnd_end *e)
{
	proto_put_end(out, false, e);
	if (e->status == DND_ST_OK)
		return DND_MSG_LEN;
	return DND_MSG_LEN + proto_put_reason(out + DND_MSG_LEN, e->reason);
}

size_t proto_put_ranges(uint8_t out[DND_RANGES_LEN_MAX], const uint64_t *h,
			unsigned int n)
{
	unsigned int i;

	DND_BUG_ON(n < 2 || n > DND_STREAMS_MAX);
	memcpy(out, magic_ranges, 4);
	be_put16(out + 4, (uint16_t)n);
	be_put16(out + 6, 0);
	for (i = 0; i <= n; i++)
		be_put64(out + DND_RANGES_HEAD_LEN + 8 * i, h[i]);
	return DND_RANGES_HEAD_LEN + 8 * ((size_t)n + 1);
}

int proto_get_ranges(const uint8_t *in, size_t len, unsigned int n,
		     uint64_t *h, char *why, unsigned int whylen)
{
	unsigned int i, count;

	if (len < DND_RANGES_HEAD_LEN || memcmp(in, magic_ranges, 4)) {
		snprintf(why, whylen, "no ranges' hashes after the trailer");
		return -EBADMSG;
	}
	count = be_get16(in + 4);
	if (count != n || n < 2 || n > DND_STREAMS_MAX || be_get16(in + 6) ||
	    len != DND_RANGES_HEAD_LEN + 8 * ((size_t)n + 1)) {
		snprintf(why, whylen, "malformed ranges' hashes (%u for %u "
			 "streams)", count, n);
		return -EBADMSG;
	}
	for (i = 0; i <= n; i++)
		h[i] = be_get64(in + DND_RANGES_HEAD_LEN + 8 * i);
	return 0;
}

uint64_t proto_ranges_bind(uint64_t whole, const uint64_t *h, unsigned int n)
{
	uint8_t b[8 * DND_STREAMS_MAX];
	unsigned int i;

	DND_BUG_ON(n > DND_STREAMS_MAX);
	for (i = 0; i < n; i++)
		be_put64(b + 8 * i, h[i]);
	return XXH3_64bits_withSeed(b, 8 * (size_t)n, whole);
}

void proto_put_extents_head(uint8_t out[DND_EXTENTS_HEAD_LEN], uint32_t n)
{
	memcpy(out, magic_extents, 4);
	be_put32(out + 4, n);
}

int proto_get_extents_head(const uint8_t in[DND_EXTENTS_HEAD_LEN],
			   uint32_t *n, char *why, unsigned int len)
{
	*n = be_get32(in + 4);
	if (memcmp(in, magic_extents, 4) || *n > DND_EXTENTS_MAX) {
		snprintf(why, len, "malformed extent list (head)");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_extent(uint8_t out[DND_EXTENT_LEN], const struct dnd_extent *e)
{
	be_put64(out, e->off);
	be_put64(out + 8, e->len);
}

int proto_get_extent(const uint8_t in[DND_EXTENT_LEN], uint64_t after,
		     uint64_t length, struct dnd_extent *e, char *why,
		     unsigned int len)
{
	e->off = be_get64(in);
	e->len = be_get64(in + 8);
	if (!e->len || e->off < after || e->off > length ||
	    e->len > length - e->off) {
		snprintf(why, len, "malformed extent list (an extent of %llu "
			 "bytes at %llu: out of order, empty, touching the "
			 "one before or past the %llu-byte length)",
			 (unsigned long long)e->len,
			 (unsigned long long)e->off,
			 (unsigned long long)length);
		return -EBADMSG;
	}
	return 0;
}

void proto_put_seg(uint8_t out[DND_SEG_HDR_LEN], uint64_t n)
{
	be_put64(out, n);
}

int proto_get_seg(const uint8_t in[DND_SEG_HDR_LEN], uint64_t *n)
{
	*n = be_get64(in);
	return *n > DND_SEG_MAX ? -EBADMSG : 0;
}

const char *proto_status_name(unsigned int status)
{
	switch (status) {
	case DND_ST_OK:
		return "ok";
	case DND_ST_MISMATCH:
		return "hash mismatch";
	case DND_ST_SHORT:
		return "byte count mismatch";
	case DND_ST_IOERR:
		return "receiver could not land the data";
	case DND_ST_NOHASH:
		return "the sender sent no hash to verify against";
	case DND_ST_MALFORMED:
		return "bytes followed the trailer";
	case DND_ST_REFUSED:
		return "it cannot take this transfer";
	case DND_ST_CHANGED:
		return "the source changed while it was read";
	}
	return "unknown status";
}

/* Each message's send and receive: encode or decode around one I/O. */
#define PROTO_IO(name, type, size)					\
int proto_send_##name(int sock, const struct type *m)			\
{									\
	uint8_t b[size];						\
									\
	proto_put_##name(b, m);						\
	return net_send_all(sock, b, sizeof(b));			\
}									\
									\
int proto_recv_##name(int sock, struct type *m, char *why, size_t len)	\
{									\
	uint8_t b[size];						\
	int r = net_recv_all(sock, b, sizeof(b));			\
									\
	return r ? r : proto_get_##name(b, m, why, (unsigned int)len);	\
}

int proto_send_hdr(int sock, const struct dnd_hdr *h)
{
	uint8_t b[DND_HDR_LEN];

	proto_put_hdr(b, h);
	return net_send_all(sock, b, sizeof(b));
}

/* Magic and version come first and are judged at once: a peer that is
 * not dnd, or speaks another version, may send fewer bytes than ours. */
int proto_recv_hdr(int sock, struct dnd_hdr *h, char *why, size_t len)
{
	uint8_t b[DND_HDR_LEN] = { 0 };
	int r = net_recv_all(sock, b, 8);

	if (!r && (memcmp(b, magic_hdr, 4) || be_get16(b + 4) != DND_PROTO_VERSION))
		return proto_get_hdr(b, h, why, (unsigned int)len);
	if (!r)
		r = net_recv_all(sock, b + 8, sizeof(b) - 8);
	return r ? r : proto_get_hdr(b, h, why, (unsigned int)len);
}

/* The reason after an answer that is not OK, into text. 0 or as above. */
static int proto_recv_reason(int sock, char text[DND_REASON_MAX + 1],
			     char *why, size_t len)
{
	uint8_t b[DND_REASON_HEAD_LEN + DND_REASON_MAX];
	size_t n;
	int r = net_recv_all(sock, b, DND_REASON_HEAD_LEN);

	if (!r)
		r = proto_get_reason_len(b, &n, why, (unsigned int)len);
	if (!r && n)
		r = net_recv_all(sock, b + DND_REASON_HEAD_LEN, n);
	return r ? r : proto_get_reason(b + DND_REASON_HEAD_LEN, n, text, why,
					(unsigned int)len);
}

int proto_send_accept(int sock, const struct dnd_accept *a)
{
	uint8_t b[DND_ANSWER_MAX];
	size_t n = DND_MSG_LEN;

	proto_put_accept(b, a);
	if (a->status != DND_ST_OK)
		n += proto_put_reason(b + DND_MSG_LEN, a->reason);
	return net_send_all(sock, b, n);
}

int proto_recv_accept(int sock, struct dnd_accept *a, char *why, size_t len)
{
	uint8_t b[DND_MSG_LEN];
	/* A dnd serve answers a one-shot sender with 8 bytes and closes. */
	int r = net_recv_all(sock, b, DND_WIRE_PRE_LEN);

	a->reason[0] = '\0';
	if (!r && wire_check_served(b, why, len))
		return -EPROTOTYPE;
	if (!r)
		r = net_recv_all(sock, b + DND_WIRE_PRE_LEN,
				 sizeof(b) - DND_WIRE_PRE_LEN);
	if (!r)
		r = proto_get_accept(b, a, why, (unsigned int)len);
	if (!r && a->status != DND_ST_OK)
		r = proto_recv_reason(sock, a->reason, why, len);
	return r;
}

PROTO_IO(plan, dnd_plan, DND_MSG_LEN)
PROTO_IO(join, dnd_join, DND_JOIN_LEN)

int proto_send_end(int sock, bool trailer, const struct dnd_end *e)
{
	uint8_t b[DND_ANSWER_MAX];
	size_t n = DND_MSG_LEN;

	if (trailer)
		proto_put_end(b, trailer, e);
	else
		n = proto_put_reply(b, e);
	return net_send_all(sock, b, n);
}

int proto_recv_end(int sock, bool trailer, struct dnd_end *e, char *why,
		   size_t len)
{
	uint8_t b[DND_MSG_LEN];
	int r = net_recv_all(sock, b, sizeof(b));

	e->reason[0] = '\0';
	if (!r)
		r = proto_get_end(b, trailer, e, why, (unsigned int)len);
	if (!r && !trailer && e->status != DND_ST_OK)
		r = proto_recv_reason(sock, e->reason, why, len);
	return r;
}

int proto_send_ranges(int sock, const uint64_t *h, unsigned int n)
{
	uint8_t b[DND_RANGES_LEN_MAX];

	return net_send_all(sock, b, proto_put_ranges(b, h, n));
}

/* The head says the count, judged before the rest is read. */
int proto_recv_ranges(int sock, unsigned int n, uint64_t *h, char *why,
		      size_t len)
{
	uint8_t b[DND_RANGES_LEN_MAX];
	size_t want = DND_RANGES_HEAD_LEN + 8 * ((size_t)n + 1);
	int r = n < 2 || n > DND_STREAMS_MAX ? -EINVAL :
		net_recv_all(sock, b, DND_RANGES_HEAD_LEN);

	if (!r && (memcmp(b, magic_ranges, 4) || be_get16(b + 4) != n))
		return proto_get_ranges(b, DND_RANGES_HEAD_LEN, n, h, why,
					(unsigned int)len);
	if (!r)
		r = net_recv_all(sock, b + DND_RANGES_HEAD_LEN,
				 want - DND_RANGES_HEAD_LEN);
	return r ? r : proto_get_ranges(b, want, n, h, why, (unsigned int)len);
}

/* In pieces of 4096 extents, each checked as it comes. */
#define PROTO_EXT_PIECE	4096

int proto_send_extents(int sock, const struct dnd_extent *e, uint32_t n)
{
	uint8_t b[PROTO_EXT_PIECE * DND_EXTENT_LEN];
	uint32_t i = 0, k;
	int r;

	proto_put_extents_head(b, n);
	r = net_send_all(sock, b, DND_EXTENTS_HEAD_LEN);
	while (!r && i < n) {
		for (k = 0; k < PROTO_EXT_PIECE && i < n; k++, i++)
			proto_put_extent(b + DND_EXTENT_LEN * k, &e[i]);
		r = net_send_all(sock, b, DND_EXTENT_LEN * (size_t)k);
	}
	return r;
}

int proto_recv_extents(int sock, uint64_t length, struct dnd_extent **out,
		       uint32_t *count, char *why, size_t len)
{
	uint8_t b[PROTO_EXT_PIECE * DND_EXTENT_LEN];
	struct dnd_extent *e;
	uint64_t after = 0;
	uint32_t n, i = 0, k, piece;
	int r = net_recv_all(sock, b, DND_EXTENTS_HEAD_LEN);

	if (!r)
		r = proto_get_extents_head(b, &n, why, (unsigned int)len);
	if (r)
		return r;
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	while (!r && i < n) {
		piece = n - i < PROTO_EXT_PIECE ? n - i : PROTO_EXT_PIECE;
		r = net_recv_all(sock, b, DND_EXTENT_LEN * (size_t)piece);
		for (k = 0; !r && k < piece; k++, i++) {
			r = proto_get_extent(b + DND_EXTENT_LEN * k, after,
					     length, &e[i], why,
					     (unsigned int)len);
			after = e[i].off + e[i].len + 1;
		}
	}
	if (r) {
		free(e);
		return r;
	}
	*out = e;
	*count = n;
	return 0;
}

int proto_send_seg(struct dnd_syscalls *sc, int sock, uint64_t n)
{
	uint8_t b[DND_SEG_HDR_LEN];

	proto_put_seg(b, n);
	return io_write_all(sc, sock, b, sizeof(b));
}

/* A header that stops half-way is a stall (-EAGAIN) or a close (-ENODATA),
 * told apart as for any other read. */
int proto_recv_seg(struct dnd_syscalls *sc, int sock, uint64_t *n)
{
	uint8_t b[DND_SEG_HDR_LEN];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t r = io_recv(sc, sock, b + got, sizeof(b) - got, 0);

		if (r < 0)
			return (int)r;
		if (r == 0)
			return -ENODATA;
		got += (size_t)r;
	}
	return proto_get_seg(b, n);
}

int proto_recv_eof(int sock)
{
	char c;
	ssize_t r;

	/* On a keyed socket the end is TLS's close_notify (a bare FIN is a
	 * cut: chan_read's -ECONNABORTED). */
	if (chan_tls(sock)) {
		r = chan_read(sock, &c, 1);
		return r < 0 ? (int)r : r ? -EBADMSG : 0;
	}
	do
		r = recv(sock, &c, 1, 0);
	while (r == -1 && errno == EINTR && !io_stop_signal);
	if (r == -1)
		return -errno;
	return r ? -EBADMSG : 0;
}

size_t proto_put_report(uint8_t *out, size_t cap, const char *json,
			size_t jlen, const char *text, size_t tlen)
{
	if (jlen > DND_REPORT_MAX || tlen > DND_REPORT_MAX ||
	    cap < DND_REPORT_HEAD_LEN + jlen + tlen)
		return 0;
	memcpy(out, magic_report, 4);
	be_put32(out + 4, (uint32_t)jlen);
	be_put32(out + 8, (uint32_t)tlen);
	be_put32(out + 12, 0);
	memcpy(out + DND_REPORT_HEAD_LEN, json, jlen);
	memcpy(out + DND_REPORT_HEAD_LEN + jlen, text, tlen);
	return DND_REPORT_HEAD_LEN + jlen + tlen;
}

int proto_recv_report(int sock, uint8_t *buf, size_t cap, size_t *len,
		      size_t *jlen, size_t *tlen, char *why, size_t whylen)
{
	int r = net_recv_all(sock, buf, DND_REPORT_HEAD_LEN);

	if (r)
		return r;
	*jlen = be_get32(buf + 4);
	*tlen = be_get32(buf + 8);
	if (memcmp(buf, magic_report, 4) || be_get32(buf + 12) ||
	    *jlen > DND_REPORT_MAX || *tlen > DND_REPORT_MAX ||
	    cap < DND_REPORT_HEAD_LEN + *jlen + *tlen) {
		snprintf(why, whylen, "malformed report");
		return -EBADMSG;
	}
	*len = DND_REPORT_HEAD_LEN + *jlen + *tlen;
	return net_recv_all(sock, buf + DND_REPORT_HEAD_LEN,
			    *len - DND_REPORT_HEAD_LEN);
}

int proto_send_bytes(int sock, const void *buf, size_t len)
{
	return net_send_all(sock, buf, len);
}
