// SPDX-License-Identifier: MIT
/*
 * dnd's wire format in one place: encoding, strict decoding, and sending
 * and receiving each message; see proto.h.
 */
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/io.h"
#include "core/net.h"
#include "core/proto.h"

static const char magic_hdr[4] = { 'D', 'N', 'D', 'H' };
static const char magic_trl[4] = { 'D', 'N', 'D', 'T' };
static const char magic_rep[4] = { 'D', 'N', 'D', 'R' };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

void proto_put_hdr(uint8_t out[DND_MSG_LEN], const struct dnd_hdr *h)
{
	memset(out, 0, DND_MSG_LEN);
	memcpy(out, magic_hdr, 4);
	put16(out + 4, h->version);
	put16(out + 6, h->flags);
	put64(out + 8, h->length);
}

int proto_get_hdr(const uint8_t in[DND_MSG_LEN], struct dnd_hdr *h, char *why,
		  unsigned int len)
{
	unsigned int i;

	if (memcmp(in, magic_hdr, 4)) {
		snprintf(why, len, "no dnd magic (first bytes %02x %02x %02x %02x); "
			 "is the peer dnd? use --raw for netcat-style peers",
			 in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	h->version = get16(in + 4);
	h->flags = get16(in + 6);
	h->length = get64(in + 8);
	if (h->version != DND_PROTO_VERSION) {
		snprintf(why, len, "protocol version %u, this dnd speaks %u",
			 h->version, DND_PROTO_VERSION);
		return -EBADMSG;
	}
	if (h->flags & ~DND_HF_SEGMENTED) {
		snprintf(why, len, "unknown header flags 0x%x", h->flags);
		return -EBADMSG;
	}
	if (h->length > DND_LEN_MAX ||
	    ((h->flags & DND_HF_SEGMENTED) && h->length)) {
		snprintf(why, len, "impossible payload length %llu",
			 (unsigned long long)h->length);
		return -EBADMSG;
	}
	for (i = 16; i < DND_MSG_LEN; i++) {
		if (in[i]) {
			snprintf(why, len, "reserved header bytes are not zero");
			return -EBADMSG;
		}
	}
	return 0;
}

void proto_put_end(uint8_t out[DND_MSG_LEN], bool trailer,
		   const struct dnd_end *e)
{
	memcpy(out, trailer ? magic_trl : magic_rep, 4);
	put16(out + 4, e->status);
	put16(out + 6, e->flags);
	put64(out + 8, e->bytes);
	put64(out + 16, e->hash);
}

int proto_get_end(const uint8_t in[DND_MSG_LEN], bool trailer,
		  struct dnd_end *e, char *why, unsigned int len)
{
	if (memcmp(in, trailer ? magic_trl : magic_rep, 4)) {
		snprintf(why, len, "bad %s magic", trailer ? "trailer" : "reply");
		return -EBADMSG;
	}
	e->status = get16(in + 4);
	e->flags = get16(in + 6);
	e->bytes = get64(in + 8);
	e->hash = get64(in + 16);
	if (e->flags & ~DND_TF_HASH || e->status > DND_ST_MAX ||
	    e->bytes > DND_LEN_MAX) {
		snprintf(why, len, "malformed %s", trailer ? "trailer" : "reply");
		return -EBADMSG;
	}
	return 0;
}

void proto_put_seg(uint8_t out[DND_SEG_HDR_LEN], uint64_t n)
{
	put64(out, n);
}

int proto_get_seg(const uint8_t in[DND_SEG_HDR_LEN], uint64_t *n)
{
	*n = get64(in);
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
	}
	return "unknown status";
}

int proto_send_hdr(int sock, const struct dnd_hdr *h)
{
	uint8_t b[DND_MSG_LEN];

	proto_put_hdr(b, h);
	return net_send_all(sock, b, sizeof(b));
}

int proto_recv_hdr(int sock, struct dnd_hdr *h, char *why, size_t len)
{
	uint8_t b[DND_MSG_LEN];
	int r = net_recv_all(sock, b, sizeof(b));

	return r ? r : proto_get_hdr(b, h, why, (unsigned int)len);
}

int proto_send_end(int sock, bool trailer, const struct dnd_end *e)
{
	uint8_t b[DND_MSG_LEN];

	proto_put_end(b, trailer, e);
	return net_send_all(sock, b, sizeof(b));
}

int proto_recv_end(int sock, bool trailer, struct dnd_end *e, char *why,
		   size_t len)
{
	uint8_t b[DND_MSG_LEN];
	int r = net_recv_all(sock, b, sizeof(b));

	return r ? r : proto_get_end(b, trailer, e, why, (unsigned int)len);
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

	do
		r = recv(sock, &c, 1, 0);
	while (r == -1 && errno == EINTR && !io_stop_signal);
	if (r == -1)
		return -errno;
	return r ? -EBADMSG : 0;
}
