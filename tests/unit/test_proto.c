// SPDX-License-Identifier: MIT
/* Wire format: round trips, and every malformed field refused. */
#include <sys/socket.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/proto.h"

static void test_accept_plan_join(void)
{
	struct dnd_accept a = { .flags = DND_AF_RESUME | DND_AF_VERIFY,
				.resume_from = 1000, .prefix_hash = 0x1234 }, a2;
	struct dnd_plan p = { DND_PF_MISMATCH, 0 }, p2;
	struct dnd_join j = { 3, 4, 99, 4096, 8192 }, j2;
	uint8_t m[DND_JOIN_LEN];
	char why[160];

	proto_put_accept(m, &a);
	CHECK(proto_get_accept(m, &a2, why, sizeof(why)) == 0 &&
	      a2.resume_from == 1000 && a2.prefix_hash == 0x1234 &&
	      a2.flags == (DND_AF_RESUME | DND_AF_VERIFY),
	      "accept round trip");
	a = (struct dnd_accept){ .flags = DND_AF_VERIFY };
	proto_put_accept(m, &a);
	CHECK(proto_get_accept(m, &a2, why, sizeof(why)) == 0 &&
	      a2.flags == DND_AF_VERIFY && !a2.resume_from,
	      "accept: verify without resume");
	a.flags = 1u << 3;
	proto_put_accept(m, &a);
	CHECK(proto_get_accept(m, &a2, why, sizeof(why)) == -EBADMSG,
	      "accept: an unknown flag");
	a = (struct dnd_accept){ .flags = DND_AF_VERIFY, .resume_from = 1000,
				 .prefix_hash = 0x1234 };
	proto_put_accept(m, &a);
	CHECK(proto_get_accept(m, &a2, why, sizeof(why)) == -EBADMSG,
	      "a resume point without the resume flag");
	proto_put_plan(m, &p);
	CHECK(proto_get_plan(m, &p2, why, sizeof(why)) == 0 &&
	      p2.flags == DND_PF_MISMATCH && !p2.start, "plan round trip");
	p.flags = DND_PF_ACKNOW;
	proto_put_plan(m, &p);
	CHECK(proto_get_plan(m, &p2, why, sizeof(why)) == 0 &&
	      p2.flags == DND_PF_ACKNOW, "plan: ACK at once");
	p.flags = 1u << 3;
	proto_put_plan(m, &p);
	CHECK(proto_get_plan(m, &p2, why, sizeof(why)) == -EBADMSG,
	      "plan: an unknown flag");
	p.flags = DND_PF_MISMATCH;
	proto_put_plan(m, &p);
	m[20] = 1;
	CHECK(proto_get_plan(m, &p2, why, sizeof(why)) == -EBADMSG,
	      "plan reserved bytes");
	proto_put_join(m, &j);
	CHECK(proto_get_join(m, &j2, why, sizeof(why)) == 0 && j2.index == 3 &&
	      j2.streams == 4 && j2.xfer_id == 99 && j2.offset == 4096 &&
	      j2.len == 8192, "join round trip");
	j.index = 4;
	proto_put_join(m, &j);
	CHECK(proto_get_join(m, &j2, why, sizeof(why)) == -EBADMSG,
	      "stream index past the count");
	j.index = 0;
	j.offset = DND_LEN_MAX;
	j.len = 2;
	proto_put_join(m, &j);
	CHECK(proto_get_join(m, &j2, why, sizeof(why)) == -EBADMSG,
	      "range past the largest length");
}

/* dnd serve's streams message: the port round trips, junk does not. */
static void test_port(void)
{
	uint8_t m[DND_PORT_LEN];
	uint16_t port = 0;

	proto_put_port(m, 40123);
	CHECK(!memcmp(m, "DNDS", 4) && proto_get_port(m, &port) == 0 &&
	      port == 40123, "streams port round trip");
	proto_put_port(m, 0);
	CHECK(proto_get_port(m, &port) == -EBADMSG, "port 0 refused");
	proto_put_port(m, 1);
	m[7] = 1;
	CHECK(proto_get_port(m, &port) == -EBADMSG, "reserved bytes refused");
	proto_put_port(m, 1);
	m[3] = 'J';
	CHECK(proto_get_port(m, &port) == -EBADMSG, "wrong magic refused");
}

/* The reason after an answer that is not OK: bounded, printable, sent
 * only then, and refused on receipt when a peer breaks those rules. */
static void test_reason(void)
{
	uint8_t b[DND_ANSWER_MAX + 1];
	struct dnd_accept a = { .status = DND_ST_REFUSED }, a2;
	struct dnd_end e = { .status = DND_ST_IOERR, .bytes = 9 }, e2;
	char why[160], text[DND_REASON_MAX + 1];
	size_t n;
	int sp[2];

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0, "socketpair");
	snprintf(a.reason, sizeof(a.reason), "x exists\n\033[2J; use -t");
	CHECK(proto_send_accept(sp[0], &a) == 0 &&
	      proto_recv_accept(sp[1], &a2, why, sizeof(why)) == 0 &&
	      a2.status == DND_ST_REFUSED &&
	      !strcmp(a2.reason, "x exists\\n\\x1b[2J; use -t"),
	      "a refusing accept carries its reason, control bytes escaped: %s",
	      a2.reason);
	memset(e.reason, 'r', DND_REASON_MAX);
	e.reason[DND_REASON_MAX] = '\0';
	CHECK(proto_send_end(sp[0], false, &e) == 0 &&
	      proto_recv_end(sp[1], false, &e2, why, sizeof(why)) == 0 &&
	      e2.status == DND_ST_IOERR && e2.bytes == 9 &&
	      strlen(e2.reason) == DND_REASON_MAX, "a failed reply's reason");
	e.status = DND_ST_OK;
	CHECK(proto_send_end(sp[0], false, &e) == 0 &&
	      recv(sp[1], b, sizeof(b), 0) == DND_MSG_LEN,
	      "an OK reply is 24 bytes, no reason");
	close(sp[0]);
	close(sp[1]);

	n = proto_put_reason(b, "no space");
	CHECK(n == DND_REASON_HEAD_LEN + 8 && !memcmp(b, "DNDE", 4) &&
	      proto_get_reason_len(b, &n, why, sizeof(why)) == 0 && n == 8 &&
	      proto_get_reason(b + DND_REASON_HEAD_LEN, n, text, why,
			       sizeof(why)) == 0 && !strcmp(text, "no space"),
	      "reason round trip");
	b[DND_REASON_HEAD_LEN + 2] = 0x1b;
	CHECK(proto_get_reason(b + DND_REASON_HEAD_LEN, n, text, why,
			       sizeof(why)) == -EBADMSG,
	      "an escape byte in a reason is refused");
	b[DND_REASON_HEAD_LEN + 2] = 0xc3;
	CHECK(proto_get_reason(b + DND_REASON_HEAD_LEN, n, text, why,
			       sizeof(why)) == -EBADMSG,
	      "a byte above 0x7e in a reason is refused");
	b[4] = (DND_REASON_MAX + 1) >> 8;
	b[5] = (DND_REASON_MAX + 1) & 0xff;
	CHECK(proto_get_reason_len(b, &n, why, sizeof(why)) == -EBADMSG,
	      "a reason over DND_REASON_MAX is refused");
	CHECK(proto_get_reason(b, DND_REASON_MAX + 1, text, why,
			       sizeof(why)) == -EBADMSG,
	      "so is text over DND_REASON_MAX");
	proto_put_reason(b, "x");
	b[7] = 1;
	CHECK(proto_get_reason_len(b, &n, why, sizeof(why)) == -EBADMSG,
	      "a reason's reserved bytes");
}

/* The extents: a head of at most DND_EXTENTS_MAX, then each extent
 * non-empty, after the one before by a byte at least, inside the length. */
static void test_extents(void)
{
	struct dnd_extent e = { .off = 4096, .len = 8192 }, g;
	uint8_t m[DND_EXTENT_LEN];
	char why[200];
	uint32_t n;

	proto_put_extents_head(m, DND_EXTENTS_MAX);
	CHECK(proto_get_extents_head(m, &n, why, sizeof(why)) == 0 &&
	      n == DND_EXTENTS_MAX, "extents head round trip");
	proto_put_extents_head(m, DND_EXTENTS_MAX + 1);
	CHECK(proto_get_extents_head(m, &n, why, sizeof(why)) == -EBADMSG,
	      "too many extents");
	proto_put_extent(m, &e);
	CHECK(proto_get_extent(m, 0, 12288, &g, why, sizeof(why)) == 0 &&
	      g.off == 4096 && g.len == 8192, "extent round trip");
	CHECK(proto_get_extent(m, 0, 12287, &g, why, sizeof(why)) == -EBADMSG,
	      "an extent past the length");
	CHECK(proto_get_extent(m, 4097, 1 << 20, &g, why, sizeof(why)) ==
	      -EBADMSG, "an extent touching or before the one before");
	e.len = 0;
	proto_put_extent(m, &e);
	CHECK(proto_get_extent(m, 0, 1 << 20, &g, why, sizeof(why)) ==
	      -EBADMSG, "an empty extent");
	e = (struct dnd_extent){ .off = 1, .len = UINT64_MAX };
	proto_put_extent(m, &e);
	CHECK(proto_get_extent(m, 0, DND_LEN_MAX, &g, why, sizeof(why)) ==
	      -EBADMSG, "an extent whose end wraps");
}

int main(void)
{
	struct dnd_hdr h = { .version = DND_PROTO_VERSION, .streams = 4,
			     .length = 123456789012ULL, .xfer_id = 77,
			     .ident = 0xabcdef }, g;
	struct dnd_end e = { .status = DND_ST_MISMATCH, .flags = DND_TF_HASH,
			     .bytes = 42, .hash = 0xdeadbeefULL }, f;
	uint8_t m[DND_HDR_LEN], s[DND_SEG_HDR_LEN];
	char why[160];
	uint64_t n;

	proto_put_hdr(m, &h);
	CHECK(!memcmp(m, "DNDH", 4), "header magic");
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == 0 &&
	      g.length == h.length && g.flags == 0 && g.streams == 4 &&
	      g.xfer_id == 77 && g.ident == 0xabcdef, "header round trip");
	m[0] = 'X';
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG &&
	      strstr(why, "--raw"), "bad magic names --raw: %s", why);
	proto_put_hdr(m, &h);
	m[5] = 9;
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG &&
	      strstr(why, "version"), "bad version: %s", why);
	proto_put_hdr(m, &h);
	m[7] = 0x80;
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "unknown flags");
	h.length = DND_LEN_MAX + 1;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "absurd length");
	h.length = 5;
	h.flags = DND_HF_SPARSE;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == 0 &&
	      g.flags == DND_HF_SPARSE, "holes offered");
	h.flags = DND_HF_SEGMENTED | DND_HF_SPARSE;
	h.length = 0;
	h.streams = 1;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "holes offered in segments");
	h.streams = 4;
	h.length = 5;
	h.flags = DND_HF_SEGMENTED;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "segmented with a length");
	h.length = 0;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG &&
	      strstr(why, "stream count"), "segmented over 4 streams: %s", why);
	h.flags = 0;
	h.streams = 0;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "no streams");
	h.streams = DND_STREAMS_MAX + 1;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "too many streams");
	h.streams = 1;
	proto_put_hdr(m, &h);
	m[40] = 1;
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "reserved bytes");
	test_accept_plan_join();
	test_extents();
	test_port();
	test_reason();

	proto_put_end(m, false, &e);
	CHECK(proto_get_end(m, false, &f, why, sizeof(why)) == 0 &&
	      f.bytes == 42 && f.hash == 0xdeadbeefULL &&
	      f.status == DND_ST_MISMATCH, "reply round trip");
	proto_put_end(m, true, &e);
	CHECK(proto_get_end(m, true, &f, why, sizeof(why)) == -EBADMSG,
	      "a trailer with a status (the reply's field) is refused");
	e.status = DND_ST_CHANGED;
	proto_put_end(m, true, &e);
	CHECK(proto_get_end(m, true, &f, why, sizeof(why)) == 0 &&
	      f.status == DND_ST_CHANGED,
	      "a trailer may say its source changed (the sender's failure)");
	e.status = DND_ST_OK;
	proto_put_end(m, true, &e);
	CHECK(proto_get_end(m, true, &f, why, sizeof(why)) == 0 &&
	      f.bytes == 42 && f.hash == 0xdeadbeefULL, "trailer round trip");
	CHECK(proto_get_end(m, false, &f, why, sizeof(why)) == -EBADMSG,
	      "trailer is not a reply");
	e.status = 99;
	proto_put_end(m, false, &e);
	CHECK(proto_get_end(m, false, &f, why, sizeof(why)) == -EBADMSG,
	      "unknown status");

	proto_put_seg(s, DND_SEG_MAX);
	CHECK(proto_get_seg(s, &n) == 0 && n == DND_SEG_MAX, "largest segment");
	proto_put_seg(s, DND_SEG_MAX + 1);
	CHECK(proto_get_seg(s, &n) == -EBADMSG, "oversized segment");
	return CHECK_DONE();
}
