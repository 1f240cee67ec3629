/* SPDX-License-Identifier: MIT */
/*
 * The bytes that open a keyed connection and dnd serve's request, with no
 * I/O (hello.c moves them): encoders and strict decoders, big-endian, each
 * message fixed in size or with a bounded length field.
 *
 * Every connection of dnd serve, and every stream of a keyed one-shot
 * transfer, opens with two 8-byte preambles, which every future version
 * keeps so that each end names both versions when they differ:
 *
 *   client/sender   -> "DNDa" u16 version, u8 mode, u8 zero
 *   server/receiver -> "DNDb" u16 version, u8 mode, u8 zero
 *
 * Mode KEY on both: TLS 1.3 (tls.h) on the connection at once, and all
 * that follows travels inside it. Mode NONE (dnd serve on loopback only)
 * stays in plain text. dnd serve then takes the request and answers it:
 *
 *   client -> server  REQUEST  "DNDq" u16 params_len, u16 zero; params
 *   server -> client  VERDICT  "DNDv" u16 status, u16 reason_len; reason
 *
 * A stream i > 0 of a keyed transfer follows its join with a token
 * (DND_WIRE_TOKEN_LEN bytes exported from stream 0's TLS session), so
 * that a stream of another session is refused.
 */
#ifndef DND_WIRE_H
#define DND_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2: TLS 1.3 replaced version 1's HMAC challenge-response. */
#define DND_WIRE_VERSION	2
#define DND_WIRE_PRE_LEN	8
#define DND_WIRE_REQ_LEN	8	/* the request's head */
#define DND_WIRE_VERD_LEN	8	/* the verdict's head */
#define DND_WIRE_PARAMS_MAX	8192	/* a longer request is malformed */
#define DND_WIRE_REASON_MAX	255
#define DND_WIRE_TOKEN_LEN	32
#define DND_WIRE_TOKEN_LABEL	"dnd stream binding"

enum dnd_wire_mode {
	DND_WIRE_NONE = 0,	/* keyless: plain text */
	DND_WIRE_KEY = 1,	/* TLS 1.3: a key file and/or certificates */
};

/* Who talks: names the peer in messages. */
enum dnd_wire_role {
	DND_WIRE_SERVE = 0,	/* dnd serve and its client */
	DND_WIRE_ONESHOT = 1,	/* dnd send -c and dnd recv */
};

struct dnd_wire_pre {
	uint16_t version;
	uint8_t mode;		/* enum dnd_wire_mode */
};

/* One-shot and dnd serve mixed up: what the peer is, seen from here. */
enum dnd_wire_other {
	DND_OTHER_SERVE,	/* a one-shot sender reached a dnd serve */
	DND_OTHER_RECV,		/* a serve client reached a 'dnd recv' */
	DND_OTHER_SENDER,	/* a dnd serve heard a one-shot sender */
	DND_OTHER_CLIENT,	/* a 'dnd recv' heard a serve client */
};

/*
 * Names what the peer is and what to use instead in why. Returns
 * -EPROTOTYPE, the code every decoder here gives for a peer of the other
 * mode: a one-shot header ("DNDH") where a server wants a preamble or a
 * request, a receiver's accept ("DNDA") where a client wants a preamble or
 * a verdict.
 */
int wire_other_mode(enum dnd_wire_other peer, char *why, size_t len);

/* Where a one-shot sender reads its receiver's first answer: 0, or
 * -EPROTOTYPE with why when in is a dnd serve's preamble or verdict. */
int wire_check_served(const uint8_t in[4], char *why, size_t len);

/* Where a one-shot receiver reads its sender's header: 0, or -EPROTOTYPE
 * with why when in is a dnd serve client's preamble or request. */
int wire_check_client(const uint8_t in[4], char *why, size_t len);

/* The opener's preamble ("DNDa", from_acceptor false) or the answer's
 * ("DNDb"). */
void wire_put_pre(uint8_t out[DND_WIRE_PRE_LEN], bool from_acceptor,
		  const struct dnd_wire_pre *p);

/*
 * Decodes a preamble from the opener (from_acceptor false) or the acceptor
 * and compares it with this end's version and mode. Returns 0; -EBADMSG
 * (not a dnd peer, reserved bits; a one-shot header at a dnd server);
 * -ENOPROTOOPT (a keyless sender's header at a keyed receiver: why says
 * so);
 * -EPROTO (the versions differ: why names both); -EACCES (a key on one
 * end only: why says which and the fix). *p is set when the magic matched.
 */
int wire_get_pre(const uint8_t in[DND_WIRE_PRE_LEN], bool from_acceptor,
		 enum dnd_wire_role role, uint16_t version,
		 enum dnd_wire_mode mode, struct dnd_wire_pre *p, char *why,
		 size_t len);

/* The sentence for a key on one end only, seen from this end. */
void wire_mode_why(enum dnd_wire_role role, bool acceptor,
		   enum dnd_wire_mode mine, char *why, size_t len);

/* The request's head. 0, or -EBADMSG (magic, reserved, too long). */
void wire_put_req(uint8_t out[DND_WIRE_REQ_LEN], uint16_t params_len);
int wire_get_req(const uint8_t in[DND_WIRE_REQ_LEN], uint16_t *params_len,
		 char *why, size_t len);

/*
 * The verdict: status 0 accepts, anything else refuses with reason (bytes
 * outside printable ASCII escaped, core/esc.h ESC_ASCII; cut to
 * DND_WIRE_REASON_MAX bytes).
 * Writes head and reason into out (cap >= DND_WIRE_VERD_LEN) and returns
 * the length.
 */
size_t wire_put_verdict(uint8_t *out, size_t cap, uint16_t status,
			const char *reason);
int wire_get_verdict(const uint8_t in[DND_WIRE_VERD_LEN], uint16_t *status,
		     uint16_t *reason_len, char *why, size_t len);

/* 0 when reason holds only printable ASCII (a hostile server must not
 * write escape sequences to the client's terminal), else -EBADMSG. */
int wire_check_reason(const uint8_t *reason, size_t len);

#endif
