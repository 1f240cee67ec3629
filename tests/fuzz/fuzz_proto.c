// SPDX-License-Identifier: MIT
/* libFuzzer: every decoder of dnd's wire format (proto.h) with a re-encoding
 * oracle, then the input as a whole stream read off a socket, which must
 * agree with the decoders message by message. */
#include <sys/socket.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/proto.h"
#include "core/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

/* A heap copy of exactly n bytes (zero-padded), so ASan sees overreads. */
static uint8_t *exact(const uint8_t *d, size_t size, size_t n)
{
	uint8_t *p = calloc(1, n);

	if (!p)
		abort();
	memcpy(p, d, size < n ? size : n);
	return p;
}

/* A refusal's reason fits its buffer and says something. */
static void check_why(const char *why, size_t len)
{
	if (!memchr(why, 0, len) || (len > 1 && !why[0]))
		abort();
}

static void fuzz_hdr(const uint8_t *in, size_t whylen)
{
	char *why = malloc(whylen);
	struct dnd_hdr h;
	uint8_t out[DND_MSG_LEN];

	if (!why)
		abort();
	if (proto_get_hdr(in, &h, why, (unsigned int)whylen)) {
		check_why(why, whylen);
		free(why);
		return;
	}
	free(why);
	if (h.version != DND_PROTO_VERSION || h.flags & ~DND_HF_SEGMENTED ||
	    h.length > DND_LEN_MAX || (h.flags & DND_HF_SEGMENTED && h.length))
		abort();
	proto_put_hdr(out, &h);
	if (memcmp(out, in, DND_MSG_LEN))
		abort();
}

/* Returns whether in decoded as this kind of end message. */
static bool fuzz_end(const uint8_t *in, bool trailer, size_t whylen)
{
	char *why = malloc(whylen);
	struct dnd_end e;
	uint8_t out[DND_MSG_LEN];

	if (!why)
		abort();
	if (proto_get_end(in, trailer, &e, why, (unsigned int)whylen)) {
		check_why(why, whylen);
		free(why);
		return false;
	}
	free(why);
	if (e.flags & ~DND_TF_HASH || e.status > DND_ST_MAX ||
	    e.bytes > DND_LEN_MAX || !proto_status_name(e.status))
		abort();
	proto_put_end(out, trailer, &e);
	if (memcmp(out, in, DND_MSG_LEN))
		abort();
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
	if (memcmp(out, in, DND_SEG_HDR_LEN))
		abort();
}

static void fuzz_decoders(const uint8_t *d, size_t size)
{
	uint8_t *m = exact(d, size, DND_MSG_LEN);
	uint8_t *s = exact(d, size, DND_SEG_HDR_LEN);
	size_t small = 1 + size % 24;

	fuzz_hdr(m, 160);
	fuzz_hdr(m, small);
	if (fuzz_end(m, true, 160) && fuzz_end(m, false, small))
		abort();	/* one message cannot be both */
	fuzz_end(m, false, 160);
	fuzz_end(m, true, small);
	fuzz_seg(s);
	free(m);
	free(s);
}

/* Reads and drops n bytes as the payload; false at the end of the data. */
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

/*
 * The receiver's framing over a socket: a header, a length or segments,
 * a trailer. Each reader must return what its decoder says about the same
 * bytes, or -ENODATA exactly when fewer bytes are left than it needs.
 */
static void fuzz_stream(int fd, const uint8_t *d, size_t size)
{
	struct dnd_syscalls sc = { 0 };
	struct dnd_hdr h, h2;
	struct dnd_end e, e2;
	char why[160], why2[160];
	size_t at = DND_MSG_LEN;
	uint64_t n;
	int r;

	r = proto_recv_hdr(fd, &h, why, sizeof(why));
	if (size < DND_MSG_LEN) {
		if (r != -ENODATA)
			abort();
		return;
	}
	if (r != proto_get_hdr(d, &h2, why2, sizeof(why2)) ||
	    (!r && (h.version != h2.version || h.flags != h2.flags ||
		    h.length != h2.length)))
		abort();
	if (r)
		return;
	while (h.flags & DND_HF_SEGMENTED) {
		uint8_t *c = exact(d + at, size - at, DND_SEG_HDR_LEN);
		uint64_t n2;
		int r2 = proto_get_seg(c, &n2);

		free(c);
		r = proto_recv_seg(&sc, fd, &n);
		if (size - at < DND_SEG_HDR_LEN) {
			if (r != -ENODATA)
				abort();
			return;
		}
		if (r != r2 || n != n2)
			abort();
		if (r)
			return;
		at += DND_SEG_HDR_LEN;
		if (!n)
			break;
		if (!skip(fd, n))
			return;
		at += n;
	}
	if (!(h.flags & DND_HF_SEGMENTED)) {
		if (!skip(fd, h.length))
			return;
		at += h.length;
	}
	r = proto_recv_end(fd, true, &e, why, sizeof(why));
	if (size - at < DND_MSG_LEN) {
		if (r != -ENODATA)
			abort();
		return;
	}
	if (r != proto_get_end(d + at, true, &e2, why2, sizeof(why2)) ||
	    (!r && (e.status != e2.status || e.flags != e2.flags ||
		    e.bytes != e2.bytes || e.hash != e2.hash)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	int sp[2];

	fuzz_decoders(d, size);
	/* The whole input must fit in the socket buffer, written at once. */
	if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 0;
	if (size && send(sp[1], d, size, 0) != (ssize_t)size)
		abort();
	shutdown(sp[1], SHUT_WR);
	fuzz_stream(sp[0], d, size);
	close(sp[0]);
	close(sp[1]);
	return 0;
}
