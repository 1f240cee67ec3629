// SPDX-License-Identifier: MIT
/* dnd serve's handshake messages: encoding, strict decoding, proofs, MACs;
 * see auth.h for the layouts. No I/O here, so all of it can be fuzzed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "serve/auth.h"

_Static_assert(DND_AUTH_MAC_LEN == crypto_auth_hmacsha256_BYTES,
	       "tags are HMAC-SHA-256");
_Static_assert(sizeof(((struct dnd_auth *)0)->key) ==
	       crypto_auth_hmacsha256_KEYBYTES, "session key size");

static const char magic_hello[4] = { 'D', 'N', 'D', 'a' };
static const char magic_chal[4] = { 'D', 'N', 'D', 'b' };
static const char magic_resp[4] = { 'D', 'N', 'D', 'c' };
static const char magic_verd[4] = { 'D', 'N', 'D', 'v' };
static const char magic_oneshot[4] = { 'D', 'N', 'D', 'H' };

/* The labels keep each HMAC of the same key apart (NUL included). */
static const char label_server[] = "dnd-serve server proof";
static const char label_client[] = "dnd-serve client proof";
static const char label_session[] = "dnd-serve session key";
static const char label_mac[] = "dnd-serve session mac";

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return sodium_is_zero(p, n) == 1;
}

static void put_pre(uint8_t *out, const char magic[4],
		    const struct dnd_auth_pre *p)
{
	memcpy(out, magic, 4);
	put16(out + 4, p->version);
	out[6] = p->mode;
	out[7] = 0;
}

void auth_put_hello(uint8_t out[DND_AUTH_HELLO_LEN],
		    const struct dnd_auth_hello *h)
{
	memset(out, 0, DND_AUTH_HELLO_LEN);
	put_pre(out, magic_hello, &h->pre);
	memcpy(out + 8, h->nonce, DND_AUTH_NONCE_LEN);
	put16(out + 40, h->params_len);
}

void auth_put_chal(uint8_t out[DND_AUTH_CHAL_LEN],
		   const struct dnd_auth_chal *c)
{
	put_pre(out, magic_chal, &c->pre);
	memcpy(out + 8, c->nonce, DND_AUTH_NONCE_LEN);
	memcpy(out + 40, c->proof, DND_AUTH_MAC_LEN);
}

void auth_put_resp(uint8_t out[DND_AUTH_RESP_LEN],
		   const struct dnd_auth_resp *r)
{
	memset(out, 0, DND_AUTH_RESP_LEN);
	memcpy(out, magic_resp, 4);
	out[4] = r->verdict;
	memcpy(out + 8, r->proof, DND_AUTH_MAC_LEN);
}

/* The message for one end with a key and the other without. */
static void pre_mode_why(bool from_server, enum dnd_auth_mode mine,
			 char *why, size_t len)
{
	if (from_server && mine == DND_AUTH_KEY)
		snprintf(why, len, "the server runs without a key (keyless, "
			 "loopback only) but this client has one; refusing an "
			 "unauthenticated session");
	else if (from_server)
		snprintf(why, len, "the server requires a key; give this "
			 "client the server's key file");
	else if (mine == DND_AUTH_KEY)
		snprintf(why, len, "the client has no key but this server "
			 "requires one");
	else
		snprintf(why, len, "the client uses a key but this server "
			 "runs without one (keyless, loopback only)");
}

/* Checks magic and reserved byte of a preamble, whatever its version. */
static int pre_form(const uint8_t *in, bool from_server, char *why,
		    size_t len)
{
	if (!from_server && !memcmp(in, magic_oneshot, 4)) {
		snprintf(why, len, "the peer speaks dnd's one-shot protocol "
			 "(dnd send -c); a dnd server wants a handshake");
		return -EBADMSG;
	}
	if (memcmp(in, from_server ? magic_chal : magic_hello, 4)) {
		snprintf(why, len, "not a dnd serve %s (first bytes %02x %02x "
			 "%02x %02x)", from_server ? "server" : "client",
			 in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	return 0;
}

/* Reads version and mode, and checks the reserved byte and the mode. */
static int pre_fields(const uint8_t *in, struct dnd_auth_pre *p, char *why,
		      size_t len)
{
	p->version = get16(in + 4);
	p->mode = in[6];
	if (in[7] || p->mode > DND_AUTH_KEY) {
		snprintf(why, len, "malformed preamble (mode %u, reserved %u)",
			 p->mode, in[7]);
		return -EBADMSG;
	}
	return 0;
}

int auth_get_pre(const uint8_t in[DND_AUTH_PRE_LEN], bool from_server,
		 uint16_t version, enum dnd_auth_mode mode,
		 struct dnd_auth_pre *p, char *why, size_t len)
{
	int err = pre_form(in, from_server, why, len);

	if (err)
		return err;
	err = pre_fields(in, p, why, len);
	/* The version first: another version may use the other fields. */
	if (p->version != version) {
		snprintf(why, len, "protocol version mismatch: this dnd speaks "
			 "version %u, the %s speaks version %u", version,
			 from_server ? "server" : "client", p->version);
		return -EPROTO;
	}
	if (err)
		return err;
	if (p->mode != mode) {
		pre_mode_why(from_server, mode, why, len);
		return -EACCES;
	}
	return 0;
}

/* Form checks common to both preambles, for the whole-message decoders. */
static int get_pre_form(const uint8_t *in, bool from_server,
			struct dnd_auth_pre *p, char *why, size_t len)
{
	int err = pre_form(in, from_server, why, len);

	return err ? err : pre_fields(in, p, why, len);
}

int auth_get_hello(const uint8_t in[DND_AUTH_HELLO_LEN],
		   struct dnd_auth_hello *h, char *why, size_t len)
{
	int err = get_pre_form(in, false, &h->pre, why, len);

	if (err)
		return err;
	memcpy(h->nonce, in + 8, DND_AUTH_NONCE_LEN);
	h->params_len = get16(in + 40);
	if (h->params_len > DND_AUTH_PARAMS_MAX) {
		snprintf(why, len, "hello declares %u bytes of parameters; "
			 "the limit is %d", h->params_len, DND_AUTH_PARAMS_MAX);
		return -EBADMSG;
	}
	if (!all_zero(in + 42, DND_AUTH_HELLO_LEN - 42)) {
		snprintf(why, len, "reserved hello bytes are not zero");
		return -EBADMSG;
	}
	return 0;
}

int auth_get_chal(const uint8_t in[DND_AUTH_CHAL_LEN],
		  struct dnd_auth_chal *c, char *why, size_t len)
{
	int err = get_pre_form(in, true, &c->pre, why, len);

	if (err)
		return err;
	memcpy(c->nonce, in + 8, DND_AUTH_NONCE_LEN);
	memcpy(c->proof, in + 40, DND_AUTH_MAC_LEN);
	if (c->pre.mode == DND_AUTH_NONE &&
	    !all_zero(c->proof, DND_AUTH_MAC_LEN)) {
		snprintf(why, len, "keyless challenge carries a proof");
		return -EBADMSG;
	}
	return 0;
}

int auth_get_resp(const uint8_t in[DND_AUTH_RESP_LEN],
		  struct dnd_auth_resp *r, char *why, size_t len)
{
	if (memcmp(in, magic_resp, 4)) {
		snprintf(why, len, "bad response magic");
		return -EBADMSG;
	}
	r->verdict = in[4];
	memcpy(r->proof, in + 8, DND_AUTH_MAC_LEN);
	if (r->verdict > DND_AUTH_RESP_REFUSED || !all_zero(in + 5, 3)) {
		snprintf(why, len, "malformed response (verdict %u)",
			 r->verdict);
		return -EBADMSG;
	}
	if (r->verdict == DND_AUTH_RESP_REFUSED &&
	    !all_zero(r->proof, DND_AUTH_MAC_LEN)) {
		snprintf(why, len, "a refusing response carries a proof");
		return -EBADMSG;
	}
	return 0;
}

void auth_proof(const struct dnd_key *k, bool server,
		const uint8_t hello[DND_AUTH_HELLO_LEN], const uint8_t *params,
		size_t params_len, const uint8_t chal[DND_AUTH_CHAL_LEN],
		uint8_t out[DND_AUTH_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, k->bytes, k->len);
	if (server)
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)label_server,
					      sizeof(label_server));
	else
		crypto_auth_hmacsha256_update(&st, (const uint8_t *)label_client,
					      sizeof(label_client));
	crypto_auth_hmacsha256_update(&st, hello, DND_AUTH_HELLO_LEN);
	crypto_auth_hmacsha256_update(&st, params, params_len);
	/* The server's proof is inside the CHALLENGE: it covers bytes 0-39. */
	crypto_auth_hmacsha256_update(&st, chal,
				      server ? 40 : DND_AUTH_CHAL_LEN);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

bool auth_tag_equal(const uint8_t a[DND_AUTH_MAC_LEN],
		    const uint8_t b[DND_AUTH_MAC_LEN])
{
	return sodium_memcmp(a, b, DND_AUTH_MAC_LEN) == 0;
}

void auth_session_key(struct dnd_auth *a, const struct dnd_key *k,
		      const uint8_t cnonce[DND_AUTH_NONCE_LEN],
		      const uint8_t snonce[DND_AUTH_NONCE_LEN])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, k->bytes, k->len);
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label_session,
				      sizeof(label_session));
	crypto_auth_hmacsha256_update(&st, cnonce, DND_AUTH_NONCE_LEN);
	crypto_auth_hmacsha256_update(&st, snonce, DND_AUTH_NONCE_LEN);
	crypto_auth_hmacsha256_final(&st, a->key);
	sodium_memzero(&st, sizeof(st));
}

void auth_mac(const struct dnd_auth *a, enum dnd_auth_mac_kind kind,
	      const void *msg, size_t len, uint8_t tag[DND_AUTH_MAC_LEN])
{
	crypto_auth_hmacsha256_state st;
	uint8_t k = (uint8_t)kind;

	if (a->mode != DND_AUTH_KEY) {
		memset(tag, 0, DND_AUTH_MAC_LEN);
		return;
	}
	crypto_auth_hmacsha256_init(&st, a->key, sizeof(a->key));
	crypto_auth_hmacsha256_update(&st, (const uint8_t *)label_mac,
				      sizeof(label_mac));
	crypto_auth_hmacsha256_update(&st, &k, 1);
	crypto_auth_hmacsha256_update(&st, msg, len);
	crypto_auth_hmacsha256_final(&st, tag);
	sodium_memzero(&st, sizeof(st));
}

int auth_mac_verify(const struct dnd_auth *a, enum dnd_auth_mac_kind kind,
		    const void *msg, size_t len,
		    const uint8_t tag[DND_AUTH_MAC_LEN])
{
	uint8_t want[DND_AUTH_MAC_LEN];
	bool ok;

	auth_mac(a, kind, msg, len, want);
	ok = auth_tag_equal(want, tag);
	sodium_memzero(want, sizeof(want));
	return ok ? 0 : -EBADMSG;
}

size_t auth_put_verdict(uint8_t *out, size_t cap, const struct dnd_auth *a,
			uint16_t status, const char *reason)
{
	size_t i, n = reason ? strlen(reason) : 0;

	if (cap < DND_AUTH_VERD_LEN + DND_AUTH_MAC_LEN)
		return 0;
	if (n > DND_AUTH_REASON_MAX)
		n = DND_AUTH_REASON_MAX;
	if (n > cap - DND_AUTH_VERD_LEN - DND_AUTH_MAC_LEN)
		n = cap - DND_AUTH_VERD_LEN - DND_AUTH_MAC_LEN;
	memcpy(out, magic_verd, 4);
	put16(out + 4, status);
	put16(out + 6, (uint16_t)n);
	/* The reason may quote a client's name: keep it printable. */
	for (i = 0; i < n; i++)
		out[DND_AUTH_VERD_LEN + i] =
			reason[i] >= 0x20 && reason[i] <= 0x7e ? reason[i] : '?';
	auth_mac(a, DND_MAC_VERDICT, out, DND_AUTH_VERD_LEN + n,
		 out + DND_AUTH_VERD_LEN + n);
	return DND_AUTH_VERD_LEN + n + DND_AUTH_MAC_LEN;
}

int auth_get_verdict(const uint8_t in[DND_AUTH_VERD_LEN], uint16_t *status,
		     uint16_t *reason_len, char *why, size_t len)
{
	if (memcmp(in, magic_verd, 4)) {
		snprintf(why, len, "bad verdict magic");
		return -EBADMSG;
	}
	*status = get16(in + 4);
	*reason_len = get16(in + 6);
	if (*reason_len > DND_AUTH_REASON_MAX) {
		snprintf(why, len, "verdict reason of %u bytes; the limit is %d",
			 *reason_len, DND_AUTH_REASON_MAX);
		return -EBADMSG;
	}
	return 0;
}

int auth_check_reason(const uint8_t *reason, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (reason[i] < 0x20 || reason[i] > 0x7e)
			return -EBADMSG;
	return 0;
}
