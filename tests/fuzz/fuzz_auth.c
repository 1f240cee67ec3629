// SPDX-License-Identifier: MIT
/* libFuzzer: every decoder of the bytes before TLS (wire.h), with a
 * re-encoding oracle, then both ends of dnd serve's handshake and a
 * one-shot receiver's opening fed the input as the peer's. */
#include <sys/socket.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chan.h"
#include "core/hello.h"
#include "core/stats.h"
#include "core/tls.h"
#include "core/wire.h"
#include "serve/handshake.h"

static const uint8_t psk[DND_TLS_PSK_LEN] =
	"fuzzing key 0123456789abcdefghi";
static const struct dnd_tls_cfg tls = { .psk = psk };

/* A heap copy of exactly n bytes (zero-padded), so ASan sees overreads. */
static uint8_t *exact(const uint8_t *d, size_t size, size_t n)
{
	uint8_t *p = calloc(1, n);

	if (p)
		memcpy(p, d, size < n ? size : n);
	return p;
}

/* What decodes must re-encode to the same bytes. */
static void fuzz_decoders(const uint8_t *d, size_t size)
{
	uint8_t *h = exact(d, size, DND_WIRE_PRE_LEN);
	uint8_t out[DND_WIRE_VERD_LEN + DND_WIRE_REASON_MAX];
	struct dnd_wire_pre pre;
	uint16_t st, n;
	char why[512];
	int role, from;

	if (!h)
		abort();
	for (role = 0; role < 2; role++)
		for (from = 0; from < 2; from++)
			if (!wire_get_pre(h, from, role, DND_WIRE_VERSION,
					  DND_WIRE_KEY, &pre, why,
					  sizeof(why))) {
				wire_put_pre(out, from, &pre);
				if (memcmp(out, h, DND_WIRE_PRE_LEN))
					abort();
			}
	if (!wire_get_req(h, &n, why, sizeof(why))) {
		wire_put_req(out, n);
		if (memcmp(out, h, DND_WIRE_REQ_LEN) ||
		    n > DND_WIRE_PARAMS_MAX)
			abort();
	}
	if (!wire_get_verdict(h, &st, &n, why, sizeof(why)) &&
	    n > DND_WIRE_REASON_MAX)
		abort();
	wire_check_reason(d, size);
	free(h);
}

/* Runs one end with the input as all the peer ever sent. */
static void fuzz_end(const uint8_t *d, size_t size, int which, bool keyed)
{
	struct dnd_hs_cfg cfg = { keyed ? &tls : NULL, DND_WIRE_VERSION,
				  stats_now() + 1 };
	struct dnd_hello h = { DND_WIRE_ONESHOT, DND_WIRE_VERSION,
			       keyed ? &tls : NULL, stats_now() + 1 };
	uint8_t *params = malloc(DND_WIRE_PARAMS_MAX);
	size_t plen = 0;
	char why[512];
	int sp[2];

	if (!params || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
		abort();
	/* Fits the socket buffer, and the peer is done: nothing blocks. */
	if (write(sp[0], d, size) != (ssize_t)size)
		abort();
	shutdown(sp[0], SHUT_WR);
	if (which == 0 && !hs_server(sp[1], &cfg, params, &plen, why,
				     sizeof(why)) && plen > DND_WIRE_PARAMS_MAX)
		abort();
	if (which == 1)
		hs_client(sp[1], &cfg, "push f 1", 8, NULL, why, sizeof(why));
	if (which == 2)
		hello_accept(sp[1], &h, why, sizeof(why));
	close(sp[0]);
	chan_close(sp[1]);
	free(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t size)
{
	int which;

	if (size > 65536)
		return 0;
	fuzz_decoders(d, size);
	for (which = 0; which < 3; which++) {
		fuzz_end(d, size, which, true);
		fuzz_end(d, size, which, false);
	}
	return 0;
}
