// SPDX-License-Identifier: MIT
/* The bytes around TLS: preambles, dnd serve's request and verdict; see
 * wire.h. No I/O here, so all of it can be fuzzed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/be.h"
#include "core/esc.h"
#include "core/wire.h"

static const char magic_open[4] = { 'D', 'N', 'D', 'a' };
static const char magic_answer[4] = { 'D', 'N', 'D', 'b' };
static const char magic_req[4] = { 'D', 'N', 'D', 'q' };
static const char magic_verd[4] = { 'D', 'N', 'D', 'v' };
static const char magic_oneshot[4] = { 'D', 'N', 'D', 'H' };
/* A one-shot receiver's accept (proto.h), where a dnd serve client reads
 * a preamble or a verdict: the receiver's way to say what it is. */
static const char magic_oneshot_acc[4] = { 'D', 'N', 'D', 'A' };

int wire_other_mode(enum dnd_wire_other peer, char *why, size_t len)
{
	static const char *const says[] = {
		[DND_OTHER_SERVE] = "the peer is a 'dnd serve'; use --to NAME "
			"(send) or --from NAME (recv)",
		[DND_OTHER_RECV] = "the peer is a one-shot 'dnd recv', not a "
			"'dnd serve'; send to it without --to NAME (a pull "
			"with --from needs a dnd serve)",
		[DND_OTHER_SENDER] = "the client is a one-shot 'dnd send' "
			"without --to NAME; a dnd serve takes 'dnd send --to "
			"NAME' or 'dnd recv --from NAME'",
		[DND_OTHER_CLIENT] = "the peer is a dnd serve client ('dnd "
			"send --to NAME' or 'dnd recv --from NAME'); this "
			"one-shot 'dnd recv' takes 'dnd send -c HOST FILE' "
			"without --to",
	};

	snprintf(why, len, "%s", says[peer]);
	return -EPROTOTYPE;
}

void wire_put_pre(uint8_t out[DND_WIRE_PRE_LEN], bool from_acceptor,
		  const struct dnd_wire_pre *p)
{
	memcpy(out, from_acceptor ? magic_answer : magic_open, 4);
	be_put16(out + 4, p->version);
	out[6] = p->mode;
	out[7] = 0;
}

void wire_mode_why(enum dnd_wire_role role, bool acceptor,
		   enum dnd_wire_mode mine, char *why, size_t len)
{
	const char *peer = role == DND_WIRE_ONESHOT ?
			   (acceptor ? "sender" : "receiver") :
			   (acceptor ? "client" : "server");

	if (role == DND_WIRE_SERVE && !acceptor && mine == DND_WIRE_KEY)
		snprintf(why, len, "the server runs without a key (keyless, "
			 "loopback only) but this client has one; refusing an "
			 "unauthenticated session");
	else if (role == DND_WIRE_SERVE && !acceptor)
		snprintf(why, len, "the server requires a key; give this "
			 "client the server's key file");
	else if (role == DND_WIRE_SERVE && mine == DND_WIRE_KEY)
		snprintf(why, len, "the client has no key but this server "
			 "requires one");
	else if (role == DND_WIRE_SERVE)
		snprintf(why, len, "the client uses a key but this server "
			 "runs without one (keyless, loopback only)");
	else if (mine == DND_WIRE_KEY)
		snprintf(why, len, "the %s has no key; give it --key too, or "
			 "drop --key here", peer);
	else
		snprintf(why, len, "the %s has a key; give --key here too, or "
			 "drop it there", peer);
}

int wire_check_served(const uint8_t in[4], char *why, size_t len)
{
	if (memcmp(in, magic_answer, 4) && memcmp(in, magic_verd, 4))
		return 0;
	return wire_other_mode(DND_OTHER_SERVE, why, len);
}

int wire_check_client(const uint8_t in[4], char *why, size_t len)
{
	if (memcmp(in, magic_open, 4) && memcmp(in, magic_req, 4))
		return 0;
	return wire_other_mode(DND_OTHER_CLIENT, why, len);
}

int wire_get_pre(const uint8_t in[DND_WIRE_PRE_LEN], bool from_acceptor,
		 enum dnd_wire_role role, uint16_t version,
		 enum dnd_wire_mode mode, struct dnd_wire_pre *p, char *why,
		 size_t len)
{
	if (!from_acceptor && !memcmp(in, magic_oneshot, 4)) {
		if (role != DND_WIRE_ONESHOT)
			return wire_other_mode(DND_OTHER_SENDER, why, len);
		wire_mode_why(role, true, mode, why, len);
		return -ENOPROTOOPT;
	}
	if (from_acceptor && role == DND_WIRE_SERVE &&
	    !memcmp(in, magic_oneshot_acc, 4))
		return wire_other_mode(DND_OTHER_RECV, why, len);
	if (memcmp(in, from_acceptor ? magic_answer : magic_open, 4)) {
		snprintf(why, len, "not a dnd %s (first bytes %02x %02x %02x "
			 "%02x)", from_acceptor ? "server or receiver" :
			 "client or sender", in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	p->version = be_get16(in + 4);
	p->mode = in[6];
	/* The version first: another version may use the other fields. */
	if (p->version != version) {
		snprintf(why, len, "protocol version mismatch: this dnd speaks "
			 "version %u, the %s speaks version %u", version,
			 role == DND_WIRE_ONESHOT ?
			 (from_acceptor ? "receiver" : "sender") :
			 (from_acceptor ? "server" : "client"), p->version);
		return -EPROTO;
	}
	if (in[7] || p->mode > DND_WIRE_KEY) {
		snprintf(why, len, "malformed preamble (mode %u, reserved %u)",
			 p->mode, in[7]);
		return -EBADMSG;
	}
	if (p->mode != mode) {
		wire_mode_why(role, !from_acceptor, mode, why, len);
		return -EACCES;
	}
	return 0;
}

void wire_put_req(uint8_t out[DND_WIRE_REQ_LEN], uint16_t params_len)
{
	memcpy(out, magic_req, 4);
	be_put16(out + 4, params_len);
	be_put16(out + 6, 0);
}

int wire_get_req(const uint8_t in[DND_WIRE_REQ_LEN], uint16_t *params_len,
		 char *why, size_t len)
{
	if (!memcmp(in, magic_oneshot, 4))
		return wire_other_mode(DND_OTHER_SENDER, why, len);
	if (memcmp(in, magic_req, 4) || !be_zeros(in + 6, 2)) {
		snprintf(why, len, "malformed request (first bytes %02x %02x "
			 "%02x %02x)", in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	*params_len = be_get16(in + 4);
	if (*params_len > DND_WIRE_PARAMS_MAX) {
		snprintf(why, len, "the request declares %u bytes of "
			 "parameters; the limit is %d", *params_len,
			 DND_WIRE_PARAMS_MAX);
		return -EBADMSG;
	}
	return 0;
}

size_t wire_put_verdict(uint8_t *out, size_t cap, uint16_t status,
			const char *reason)
{
	char text[DND_WIRE_REASON_MAX + 1];
	size_t n;

	if (cap < DND_WIRE_VERD_LEN)
		return 0;
	n = cap - DND_WIRE_VERD_LEN;
	esc_text(text, n < sizeof(text) ? n + 1 : sizeof(text), reason,
		 strlen(reason), ESC_ASCII);
	n = strlen(text);
	memcpy(out, magic_verd, 4);
	be_put16(out + 4, status);
	be_put16(out + 6, (uint16_t)n);
	memcpy(out + DND_WIRE_VERD_LEN, text, n);
	return DND_WIRE_VERD_LEN + n;
}

int wire_get_verdict(const uint8_t in[DND_WIRE_VERD_LEN], uint16_t *status,
		     uint16_t *reason_len, char *why, size_t len)
{
	if (!memcmp(in, magic_oneshot_acc, 4))
		return wire_other_mode(DND_OTHER_RECV, why, len);
	if (memcmp(in, magic_verd, 4)) {
		snprintf(why, len, "not a verdict (first bytes %02x %02x %02x "
			 "%02x)", in[0], in[1], in[2], in[3]);
		return -EBADMSG;
	}
	*status = be_get16(in + 4);
	*reason_len = be_get16(in + 6);
	if (*reason_len > DND_WIRE_REASON_MAX) {
		snprintf(why, len, "the verdict's reason is %u bytes; the "
			 "limit is %d", *reason_len, DND_WIRE_REASON_MAX);
		return -EBADMSG;
	}
	return 0;
}

int wire_check_reason(const uint8_t *reason, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (reason[i] < 0x20 || reason[i] > 0x7e)
			return -EBADMSG;
	return 0;
}
