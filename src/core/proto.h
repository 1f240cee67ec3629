/* SPDX-License-Identifier: MIT */
/*
 * dnd's wire format. Fixed-size, big-endian, bounded messages around a raw
 * payload, so that sendfile and splice move the payload without framing.
 * One transfer is 1..64 streams (connections); stream 0 carries the talk:
 *
 *   stream 0:  header  ->   (48: version, length, transfer id, source
 *                            identity, stream count)
 *              <- accept    (24: status, whether the receiver will
 *                            compare hashes, where a kept partial file
 *                            ends and the hash of that prefix, for
 *                            --resume)
 *              [<- reason]  (when the status is not OK: why)
 *              plan    ->   (24: where the payload starts: the kept
 *                            prefix's end, or 0 when the prefixes differ;
 *                            whether the sender needs ACKs at once)
 *              [extents ->] (the header offered holes, the accept took
 *                            them, the plan says so: 8: "DNDX", u32 n,
 *                            0..65536; then n times u64 offset, u64
 *                            length: the whole file's data, in order,
 *                            each extent non-empty, a hole of at least
 *                            one byte between two, all within the
 *                            header's length. The rest are holes)
 *   stream i:  join    ->   (32: transfer id, index, this stream's range)
 *              payload ->   (the range raw, only its bytes inside the
 *                            extents when there are extents; or, one
 *                            stream only, when the length is unknown,
 *                            segments: u64 n then n raw bytes, ended by
 *                            n = 0)
 *   stream 0:  trailer ->   (24: bytes of the whole file, its hash)
 *              [ranges ->]  (N > 1 streams and a hash in the trailer:
 *                            8: "DNDK", u16 N, u16 zero; then N u64,
 *                            the XXH3-64 of each stream's range, and
 *                            one u64 that binds them to the trailer's
 *                            hash: proto_ranges_bind()), FIN
 *              <- reply     (24: status, bytes landed, hash)
 *              [<- reason]  (when the status is not OK: why)
 *
 * The receiver decides with the trailer whether to land the file, then tells
 * the sender with the reply, so both sides print the same verdict. A
 * sender whose source changed while it was read says so in the trailer's
 * status (DND_ST_CHANGED), and the receiver lands nothing. A
 * receiver that fails after its accept, even in the middle of the payload,
 * sends the reply with its reason at once: the sender reads it when its
 * sending fails. A reason is 8 bytes ("DNDE", u16 length <= 400, u16 zero)
 * and then that many bytes of printable ASCII (0x20-0x7e): the receiver's
 * message, shown by the sender, so nothing else is let through.
 *
 * With dnd serve on one end (after its handshake, serve/auth.h), the
 * trailer and the reply are each followed by a 32-byte tag (the session
 * MAC of their 24 bytes, and of a reply's reason), stream 0 is not shut
 * down after the trailer, and after the reply the server sends its own
 * report:
 *
 *              <- report    (16: "DNDQ", u32 JSON length, u32 text length,
 *                            u32 zero; then the JSON, then the text;
 *                            then the tag of all of it)
 *
 * A served transfer of N > 1 streams: right after the handshake's verdict
 * the server says where the others go, on a port of its session's own,
 *
 *              <- streams   (8: "DNDS", u16 port, u16 zero; then its tag)
 *
 * and every stream i > 0 connects there and opens with a join (a push's
 * real one; a pull's with a zero range, the server's join follows) and
 * the join's tag, before anything else. A connection whose tag does not
 * verify is dropped.
 */
#ifndef DND_PROTO_H
#define DND_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dnd_syscalls;

/* 3: the plan's DND_PF_ACKNOW. 4: the reason after an accept or a reply
 * that is not OK, which a version 3 sender would take for garbage. 5: the
 * ranges' hashes after the trailer of N > 1 streams, which a version 4
 * receiver would take for bytes after the trailer (and land nothing). 6:
 * holes (DND_HF_SPARSE, DND_AF_SPARSE, DND_PF_SPARSE, the extents after
 * the plan), whose flags a version 5 peer would refuse as unknown. A
 * version mismatch names both ends' versions. */
#define DND_PROTO_VERSION	6
#define DND_MSG_LEN		24	/* accept, plan, trailer, reply */
#define DND_REASON_HEAD_LEN	8
#define DND_REASON_MAX		400	/* bytes of a reason's text */
#define DND_ANSWER_MAX		(DND_MSG_LEN + DND_REASON_HEAD_LEN + \
				 DND_REASON_MAX)	/* with its reason */
#define DND_HDR_LEN		48
#define DND_JOIN_LEN		32
#define DND_SEG_HDR_LEN		8
#define DND_RANGES_HEAD_LEN	8	/* then 8 bytes per stream */
#define DND_RANGES_LEN_MAX	(DND_RANGES_HEAD_LEN + 8 * (DND_STREAMS_MAX + 1))
#define DND_STREAMS_MAX		64
#define DND_TAG_LEN		32	/* a session MAC after a message */
#define DND_PORT_LEN		8	/* dnd serve's streams message */
#define DND_REPORT_HEAD_LEN	16
#define DND_REPORT_MAX		32768	/* per part: JSON, text */
#define DND_EXTENTS_HEAD_LEN	8	/* then 16 bytes per extent */
#define DND_EXTENT_LEN		16
#define DND_EXTENTS_MAX		65536	/* a sender merges holes to fit */
#define DND_SEG_MAX		(1ULL << 30)	/* a larger segment is malformed */
#define DND_LEN_MAX		(1ULL << 60)	/* a larger length is malformed */

/* header flags */
#define DND_HF_SEGMENTED	(1u << 0)	/* length unknown: segments follow */
#define DND_HF_SPARSE		(1u << 1)	/* the sender can leave holes
						 * out (never segmented) */
/* accept flags */
#define DND_AF_RESUME		(1u << 0)	/* a partial file is kept: resume */
#define DND_AF_VERIFY		(1u << 1)	/* the receiver compares hashes:
						 * without it the sender need
						 * not compute one */
#define DND_AF_SPARSE		(1u << 2)	/* the receiver leaves holes
						 * as holes: send extents */
/* plan flags */
#define DND_PF_MISMATCH		(1u << 0)	/* the kept prefix differs */
#define DND_PF_ACKNOW		(1u << 1)	/* the sender waits for ACKs
						 * to reuse its buffers: the
						 * receiver ACKs at once */
#define DND_PF_SPARSE		(1u << 2)	/* the extents follow */
/* trailer and reply flags */
#define DND_TF_HASH		(1u << 0)	/* the hash field is valid */

enum dnd_status {
	DND_ST_OK = 0,		/* landed and, if both hashed, verified */
	DND_ST_MISMATCH = 1,	/* hashes differ: nothing landed */
	DND_ST_SHORT = 2,	/* byte counts differ: nothing landed */
	DND_ST_IOERR = 3,	/* the receiver could not land the data */
	DND_ST_NOHASH = 4,	/* no hash from the sender: nothing landed */
	DND_ST_MALFORMED = 5,	/* bytes after the trailer: nothing landed */
	DND_ST_REFUSED = 6,	/* the receiver cannot take this transfer */
	DND_ST_CHANGED = 7,	/* the source changed while it was read:
				 * nothing landed (the one status a trailer
				 * may carry: the sender's own failure) */
	DND_ST_MAX = DND_ST_CHANGED,
};

struct dnd_hdr {
	uint16_t version;
	uint16_t flags;
	uint16_t streams;	/* 1..DND_STREAMS_MAX; 1 when segmented */
	uint64_t length;	/* 0 when segmented */
	uint64_t xfer_id;	/* random, the same on every stream */
	uint64_t ident;		/* the source's identity; 0: none (a pipe) */
};

/* The receiver's answer to the header. */
struct dnd_accept {
	uint16_t status;	/* DND_ST_OK, or why not */
	uint16_t flags;		/* DND_AF_* */
	uint64_t resume_from;	/* bytes kept from an earlier try */
	uint64_t prefix_hash;	/* XXH3-64 of those bytes */
	char reason[DND_REASON_MAX + 1];	/* status not OK: why */
};

/* The sender's decision: the payload is [start, length). */
struct dnd_plan {
	uint16_t flags;		/* DND_PF_* */
	uint64_t start;		/* resume_from, or 0 */
};

/* First message of every stream: which transfer, which range. */
struct dnd_join {
	uint16_t index;
	uint16_t streams;
	uint64_t xfer_id;
	uint64_t offset;	/* file offset of this stream's first byte */
	uint64_t len;		/* bytes this stream carries */
};

/* Trailer (sender) and reply (receiver) share one shape. */
struct dnd_end {
	uint16_t status;	/* reply; a trailer: 0 or DND_ST_CHANGED */
	uint16_t flags;		/* DND_TF_* */
	uint64_t bytes;
	uint64_t hash;		/* XXH3-64 of the payload */
	char reason[DND_REASON_MAX + 1];	/* a reply not OK: why */
};

void proto_put_hdr(uint8_t out[DND_HDR_LEN], const struct dnd_hdr *h);
/* Returns 0, or -EBADMSG with a reason in why (magic, version, flags, len,
 * stream count, reserved bytes). */
int proto_get_hdr(const uint8_t in[DND_HDR_LEN], struct dnd_hdr *h, char *why,
		  unsigned int len);

void proto_put_accept(uint8_t out[DND_MSG_LEN], const struct dnd_accept *a);
int proto_get_accept(const uint8_t in[DND_MSG_LEN], struct dnd_accept *a,
		     char *why, unsigned int len);
void proto_put_plan(uint8_t out[DND_MSG_LEN], const struct dnd_plan *p);
int proto_get_plan(const uint8_t in[DND_MSG_LEN], struct dnd_plan *p,
		   char *why, unsigned int len);
void proto_put_join(uint8_t out[DND_JOIN_LEN], const struct dnd_join *j);
/* Also checks index < streams <= DND_STREAMS_MAX and the range's bounds. */
int proto_get_join(const uint8_t in[DND_JOIN_LEN], struct dnd_join *j,
		   char *why, unsigned int len);

/* trailer=true writes/expects "DNDT", false "DNDR". */
void proto_put_end(uint8_t out[DND_MSG_LEN], bool trailer,
		   const struct dnd_end *e);
int proto_get_end(const uint8_t in[DND_MSG_LEN], bool trailer,
		  struct dnd_end *e, char *why, unsigned int len);

/*
 * The reason after an accept or a reply that is not OK. proto_put_reason()
 * writes text escaped to printable ASCII (core/esc.h ESC_ASCII), cut to
 * DND_REASON_MAX bytes, and returns the length written. proto_get_reason_len() decodes the
 * head: the text's length in *n; proto_get_reason() those n bytes into
 * text, NUL-ended. Each returns 0, or -EBADMSG with the reason in why
 * (magic, length, reserved bytes; a byte outside 0x20-0x7e).
 */
size_t proto_put_reason(uint8_t out[DND_REASON_HEAD_LEN + DND_REASON_MAX],
			const char *text);
int proto_get_reason_len(const uint8_t in[DND_REASON_HEAD_LEN], size_t *n,
			 char *why, unsigned int len);
int proto_get_reason(const uint8_t *in, size_t n,
		     char text[DND_REASON_MAX + 1], char *why,
		     unsigned int len);
/* A reply, and its reason when the status is not OK, as one piece (what
 * dnd serve's tag covers). Returns the length written. */
size_t proto_put_reply(uint8_t out[DND_ANSWER_MAX], const struct dnd_end *e);

/*
 * The ranges' hashes (n streams, 2..DND_STREAMS_MAX): h holds n + 1
 * values, each range's hash and then their bind. proto_put_ranges()
 * writes the message and returns its length. proto_get_ranges() decodes
 * len bytes of one from a transfer of n streams into h: 0, or -EBADMSG
 * with the reason in why (magic, a count other than n, reserved bytes,
 * a length other than the count's).
 */
size_t proto_put_ranges(uint8_t out[DND_RANGES_LEN_MAX], const uint64_t *h,
			unsigned int n);
int proto_get_ranges(const uint8_t *in, size_t len, unsigned int n,
		     uint64_t *h, char *why, unsigned int whylen);

/* A data extent of a file: [off, off + len). */
struct dnd_extent {
	uint64_t off;
	uint64_t len;
};

/*
 * The extents: the head (n), then each extent, decoded against the end of
 * the one before plus one (after; 0 for the first) and the header's
 * length. Each get returns 0, or -EBADMSG with the reason in why.
 */
void proto_put_extents_head(uint8_t out[DND_EXTENTS_HEAD_LEN], uint32_t n);
int proto_get_extents_head(const uint8_t in[DND_EXTENTS_HEAD_LEN],
			   uint32_t *n, char *why, unsigned int len);
void proto_put_extent(uint8_t out[DND_EXTENT_LEN], const struct dnd_extent *e);
int proto_get_extent(const uint8_t in[DND_EXTENT_LEN], uint64_t after,
		     uint64_t length, struct dnd_extent *e, char *why,
		     unsigned int len);

/*
 * The bind of n ranges' hashes h to the trailer's hash whole: the XXH3-64
 * of the n hashes (big-endian) seeded with whole. A receiver that checks
 * ranges, not the whole file, learns with it that the trailer's hash it
 * reports is the one the ranges came with: a hash changed on the way, in
 * the trailer or among the ranges, no longer binds.
 */
uint64_t proto_ranges_bind(uint64_t whole, const uint64_t *h, unsigned int n);

void proto_put_seg(uint8_t out[DND_SEG_HDR_LEN], uint64_t n);
/* Returns 0, or -EBADMSG when n exceeds DND_SEG_MAX. */
int proto_get_seg(const uint8_t in[DND_SEG_HDR_LEN], uint64_t *n);

/*
 * The messages on a connected blocking socket. Every other module asks
 * these and never builds bytes itself. Receiving waits as long as the
 * socket's SO_RCVTIMEO allows (net_tune). Each returns 0 or:
 * -ENODATA when the peer closed before the whole message, -EAGAIN when
 * nothing came in time, -EINTR on a stop signal, -EBADMSG with the reason
 * in why when the bytes are malformed, or another -errno. An accept or a
 * reply that is not OK carries its reason (the struct's reason; "" when
 * it is OK), sent and received with it.
 */
int proto_send_hdr(int sock, const struct dnd_hdr *h);
int proto_recv_hdr(int sock, struct dnd_hdr *h, char *why, size_t len);
int proto_send_accept(int sock, const struct dnd_accept *a);
int proto_recv_accept(int sock, struct dnd_accept *a, char *why, size_t len);
int proto_send_plan(int sock, const struct dnd_plan *p);
int proto_recv_plan(int sock, struct dnd_plan *p, char *why, size_t len);
int proto_send_join(int sock, const struct dnd_join *j);
int proto_recv_join(int sock, struct dnd_join *j, char *why, size_t len);
int proto_send_end(int sock, bool trailer, const struct dnd_end *e);
int proto_recv_end(int sock, bool trailer, struct dnd_end *e, char *why,
		   size_t len);
int proto_send_ranges(int sock, const uint64_t *h, unsigned int n);
int proto_recv_ranges(int sock, unsigned int n, uint64_t *h, char *why,
		      size_t len);
int proto_send_extents(int sock, const struct dnd_extent *e, uint32_t n);
/* Into a new array (*out, the caller frees it), *count extents; -ENOMEM. */
int proto_recv_extents(int sock, uint64_t length, struct dnd_extent **out,
		       uint32_t *count, char *why, size_t len);
/* Segment headers travel inside the payload: their calls are counted in
 * sc with the data path's. */
int proto_send_seg(struct dnd_syscalls *sc, int sock, uint64_t n);
int proto_recv_seg(struct dnd_syscalls *sc, int sock, uint64_t *n);
/* After the trailer the sender only shuts down: 0 at that end of the
 * stream, -EBADMSG when bytes follow, or an error as above. */
int proto_recv_eof(int sock);

/* dnd serve's streams message (the port; its tag is the caller's). */
void proto_put_port(uint8_t out[DND_PORT_LEN], uint16_t port);
/* 0, or -EBADMSG (magic, reserved bytes, port 0). */
int proto_get_port(const uint8_t in[DND_PORT_LEN], uint16_t *port);

/* The tag after a trailer or a reply (dnd serve). 0 or as above. */
int proto_send_tag(int sock, const uint8_t tag[DND_TAG_LEN]);
int proto_recv_tag(int sock, uint8_t tag[DND_TAG_LEN]);

/*
 * The server's report: proto_put_report() writes head, json and text
 * (each part at most DND_REPORT_MAX bytes, else it returns 0) into out
 * (cap bytes) and returns the length, for the caller to tag and send
 * whole with proto_send_bytes(). proto_recv_report() reads one into buf
 * (cap >= DND_REPORT_HEAD_LEN + 2 * DND_REPORT_MAX): 0 with the whole
 * message's length in *len and the parts' in *jlen and *tlen (JSON at
 * buf + DND_REPORT_HEAD_LEN, the text right after), or an error as above.
 */
size_t proto_put_report(uint8_t *out, size_t cap, const char *json,
			size_t jlen, const char *text, size_t tlen);
int proto_recv_report(int sock, uint8_t *buf, size_t cap, size_t *len,
		      size_t *jlen, size_t *tlen, char *why, size_t whylen);
int proto_send_bytes(int sock, const void *buf, size_t len);

/* A short name for a reply status ("hash mismatch"). */
const char *proto_status_name(unsigned int status);

#endif
