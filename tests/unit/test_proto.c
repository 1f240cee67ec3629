// SPDX-License-Identifier: MIT
/* Wire format: round trips, and every malformed field refused. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "core/proto.h"

int main(void)
{
	struct dnd_hdr h = { DND_PROTO_VERSION, 0, 123456789012ULL }, g;
	struct dnd_end e = { DND_ST_MISMATCH, DND_TF_HASH, 42, 0xdeadbeefULL }, f;
	uint8_t m[DND_MSG_LEN], s[DND_SEG_HDR_LEN];
	char why[160];
	uint64_t n;

	proto_put_hdr(m, &h);
	CHECK(!memcmp(m, "DNDH", 4), "header magic");
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == 0 &&
	      g.length == h.length && g.flags == 0, "header round trip");
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
	h.flags = DND_HF_SEGMENTED;
	proto_put_hdr(m, &h);
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "segmented with a length");
	h.flags = 0;
	proto_put_hdr(m, &h);
	m[20] = 1;
	CHECK(proto_get_hdr(m, &g, why, sizeof(why)) == -EBADMSG,
	      "reserved bytes");

	proto_put_end(m, true, &e);
	CHECK(proto_get_end(m, true, &f, why, sizeof(why)) == 0 &&
	      f.bytes == 42 && f.hash == 0xdeadbeefULL &&
	      f.status == DND_ST_MISMATCH, "trailer round trip");
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
