/* SPDX-License-Identifier: MIT */
/*
 * dnd serve's handshake messages and their crypto, with no I/O: encoders,
 * strict decoders, the two key proofs, the session key and the session MAC.
 * All integers are big-endian; every message has a fixed size or a bounded
 * length field. handshake.c moves them over a socket:
 *
 *   client -> server  HELLO      48 bytes + params_len bytes of params
 *   server -> client  CHALLENGE  72 bytes
 *   client -> server  RESPONSE   40 bytes
 *   server -> client  VERDICT    8 + reason_len + 32 bytes
 *
 * HELLO and CHALLENGE start with the same 8-byte preamble (magic, version,
 * mode, zero), which every future version keeps, so that each end reads
 * the preamble alone first and names both versions when they differ.
 */
#ifndef DND_AUTH_H
#define DND_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/key.h"

#define DND_AUTH_VERSION	1	/* bump with any change of these messages */
#define DND_AUTH_NONCE_LEN	32
#define DND_AUTH_MAC_LEN	32	/* HMAC-SHA-256 */
#define DND_AUTH_PRE_LEN	8
#define DND_AUTH_HELLO_LEN	48
#define DND_AUTH_CHAL_LEN	72
#define DND_AUTH_RESP_LEN	40
#define DND_AUTH_VERD_LEN	8	/* the verdict's fixed head */
#define DND_AUTH_PARAMS_MAX	8192	/* a longer HELLO is malformed */
#define DND_AUTH_REASON_MAX	255

/* How the two ends authenticate. Both must be configured alike: a key on one
 * end and none on the other fails the handshake, never downgrades it. */
enum dnd_auth_mode {
	DND_AUTH_NONE = 0,	/* keyless, loopback only: no proofs, no MACs */
	DND_AUTH_KEY = 1,	/* pre-shared key: both ends prove it */
};

/* RESPONSE.verdict: what the client made of the server's proof. */
enum dnd_resp_verdict {
	DND_AUTH_RESP_PROOF = 0,	/* the client's proof follows */
	DND_AUTH_RESP_REFUSED = 1,	/* the server's proof did not verify */
};

/* What a session MAC covers; a tag made for one kind never verifies as
 * another, so a trailer cannot be reflected back as a reply. */
enum dnd_auth_mac_kind {
	DND_MAC_VERDICT = 1,
	DND_MAC_TRAILER = 2,
	DND_MAC_REPLY = 3,
	DND_MAC_REPORT = 4,	/* dnd serve's report to its client */
	DND_MAC_JOIN = 5,	/* the join opening a served stream i > 0 */
	DND_MAC_PORT = 6,	/* where a served transfer's streams go */
};

/* The preamble shared by HELLO ("DNDa") and CHALLENGE ("DNDb"). */
struct dnd_auth_pre {
	uint16_t version;
	uint8_t mode;			/* enum dnd_auth_mode */
};

struct dnd_auth_hello {
	struct dnd_auth_pre pre;
	uint8_t nonce[DND_AUTH_NONCE_LEN];
	uint16_t params_len;		/* <= DND_AUTH_PARAMS_MAX */
};

struct dnd_auth_chal {
	struct dnd_auth_pre pre;
	uint8_t nonce[DND_AUTH_NONCE_LEN];
	uint8_t proof[DND_AUTH_MAC_LEN];	/* zero unless both use keys */
};

struct dnd_auth_resp {
	uint8_t verdict;		/* enum dnd_resp_verdict */
	uint8_t proof[DND_AUTH_MAC_LEN];	/* zero unless PROOF with a key */
};

/* A finished handshake: what both ends share afterwards. */
struct dnd_auth {
	enum dnd_auth_mode mode;
	uint16_t peer_version;
	uint8_t key[DND_AUTH_MAC_LEN];	/* session key; zero in mode none */
	uint8_t params[DND_AUTH_PARAMS_MAX];
	size_t params_len;
};

/* Writes HELLO's fixed 48 bytes; its params follow on the wire. */
void auth_put_hello(uint8_t out[DND_AUTH_HELLO_LEN],
		    const struct dnd_auth_hello *h);
void auth_put_chal(uint8_t out[DND_AUTH_CHAL_LEN],
		   const struct dnd_auth_chal *c);
void auth_put_resp(uint8_t out[DND_AUTH_RESP_LEN],
		   const struct dnd_auth_resp *r);

/*
 * Decodes the preamble of a HELLO (from_server false) or a CHALLENGE
 * (from_server true) and compares it with this end's version and mode.
 * Returns 0; -EBADMSG (not a dnd serve peer, reserved bits), -EPROTO (the
 * versions differ: why names both) or -EACCES (one end has a key, the
 * other none). *p is filled whenever the magic matched.
 */
int auth_get_pre(const uint8_t in[DND_AUTH_PRE_LEN], bool from_server,
		 uint16_t version, enum dnd_auth_mode mode,
		 struct dnd_auth_pre *p, char *why, size_t len);

/* Decode whole fixed messages: 0, or -EBADMSG with the reason in why
 * (magic, reserved bytes, mode, params_len, verdict, a proof that must be
 * zero). They check form only; versions and proofs are the caller's. */
int auth_get_hello(const uint8_t in[DND_AUTH_HELLO_LEN],
		   struct dnd_auth_hello *h, char *why, size_t len);
int auth_get_chal(const uint8_t in[DND_AUTH_CHAL_LEN],
		  struct dnd_auth_chal *c, char *why, size_t len);
int auth_get_resp(const uint8_t in[DND_AUTH_RESP_LEN],
		  struct dnd_auth_resp *r, char *why, size_t len);

/*
 * The proofs: HMAC-SHA-256 under the pre-shared key over a label that
 * differs per role, the whole HELLO (fixed part, then params) and the
 * CHALLENGE's first 40 bytes (the server's) or all 72 (the client's, so it
 * also covers the server's proof). Both nonces and the params are inside,
 * so a proof never verifies for another session or other params.
 */
void auth_proof(const struct dnd_key *k, bool server,
		const uint8_t hello[DND_AUTH_HELLO_LEN], const uint8_t *params,
		size_t params_len, const uint8_t chal[DND_AUTH_CHAL_LEN],
		uint8_t out[DND_AUTH_MAC_LEN]);

/* Constant-time comparison of two tags: true when equal. */
bool auth_tag_equal(const uint8_t a[DND_AUTH_MAC_LEN],
		    const uint8_t b[DND_AUTH_MAC_LEN]);

/*
 * Sets a->key = HMAC-SHA-256(key, "dnd-serve session key" NUL || client
 * nonce || server nonce). Both nonces are fresh, so every session has its
 * own key and a tag never verifies in another session.
 */
void auth_session_key(struct dnd_auth *a, const struct dnd_key *k,
		      const uint8_t cnonce[DND_AUTH_NONCE_LEN],
		      const uint8_t snonce[DND_AUTH_NONCE_LEN]);

/*
 * The session MAC for VERDICT, trailer and reply messages: HMAC-SHA-256
 * under a->key over the kind byte and msg. In mode none the tag is 32 zero
 * bytes (the framing stays the same; nothing is authenticated).
 */
void auth_mac(const struct dnd_auth *a, enum dnd_auth_mac_kind kind,
	      const void *msg, size_t len, uint8_t tag[DND_AUTH_MAC_LEN]);

/* 0 when tag is auth_mac()'s for these bytes (all zeros in mode none),
 * else -EBADMSG. Compares in constant time. */
int auth_mac_verify(const struct dnd_auth *a, enum dnd_auth_mac_kind kind,
		    const void *msg, size_t len,
		    const uint8_t tag[DND_AUTH_MAC_LEN]);

/*
 * VERDICT ("DNDv"): u16 status (0 accepted; else the server's refusal
 * code), u16 reason_len (<= DND_AUTH_REASON_MAX), the reason in printable
 * ASCII, then the session MAC of everything before it. auth_put_verdict
 * writes it into out (cap bytes; reasons longer than DND_AUTH_REASON_MAX
 * or than out has room for are cut, other bytes than printable ASCII
 * become '?') and returns its length, 0 when cap cannot hold head + MAC.
 */
size_t auth_put_verdict(uint8_t *out, size_t cap, const struct dnd_auth *a,
			uint16_t status, const char *reason);

/* Decodes the verdict's head: 0 with *status and *reason_len, or -EBADMSG. */
int auth_get_verdict(const uint8_t in[DND_AUTH_VERD_LEN], uint16_t *status,
		     uint16_t *reason_len, char *why, size_t len);

/* 0 when reason holds only printable ASCII (a hostile server must not
 * write escape sequences to the client's terminal), else -EBADMSG. */
int auth_check_reason(const uint8_t *reason, size_t len);

#endif
